#!/usr/bin/env bash
# Memory must stay flat and every second must reach the disk: runs
# cephbench at queue depth 64 for DURATION seconds (default 600), prints
# its RSS after 10 seconds and at the end (growth under 1 MiB), then checks
# that the result's tick log holds every second of the run.
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
growth=$((last - start))
echo "RSS growth: ${growth} KiB (limit 1024 KiB)"

# The log's intervals must end at 1, 2, 3, ... seconds, the last at the
# measured time the JSON result states.
elapsed=$(sed -n 's/^ *"elapsed_seconds": *\([0-9.e+-]*\),*$/\1/p' "$out/result.json")
awk -v elapsed="$elapsed" '
  /^#tick / { n++; sub(/^t=/, "", $2); t[n] = $2 }
  END {
    for (i = 1; i < n; i++) if (t[i] != i) { printf "tick log: interval %d ends at %ss, want %d\n", i, t[i], i; exit 1 }
    d = t[n] - elapsed; if (d < 0) d = -d
    if (n < 1 || d > 1e-6) { printf "tick log: %d intervals, the last ending at %ss; the run measured %ss\n", n, t[n], elapsed; exit 1 }
    printf "tick log: %d intervals, every second from 1 to %d and the last ending at %ss, the measured time: none missing\n", n, n - 1, t[n]
  }' "$out/result.hlog"
[ "$growth" -lt 1024 ]
