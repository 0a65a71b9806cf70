#!/usr/bin/env bash
# Memory must stay flat: runs cephbench at queue depth 64 for DURATION
# (default 10m) and prints its RSS after 10 seconds and at the end.
#   bench/memory-soak.sh [TARGET]   default null://
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${1:-null://}
DURATION=${DURATION:-600}
CEPHBENCH=${CEPHBENCH:-bin/cephbench}
[ -x "$CEPHBENCH" ] || go build -o "$CEPHBENCH" ./cmd/cephbench
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$CEPHBENCH" bench --target "$TARGET" --rw randrw --bs 4k --size 1G --iodepth 64 \
  --duration "${DURATION}s" --quiet --output "$out/result.json" >"$out/stdout" &
pid=$!
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$pid/status"; }
sleep 10
start=$(rss)
echo "RSS after 10s: ${start} KiB"
last=$start
while kill -0 "$pid" 2>/dev/null; do
  now=$(rss 2>/dev/null || true)
  [ -n "$now" ] && last=$now
  sleep 5
done
wait "$pid"
echo "RSS at the end: ${last} KiB"
echo "growth: $(( (last - start) / 1024 )) MiB (limit 10 MiB)"
[ $(( last - start )) -le 10240 ]
