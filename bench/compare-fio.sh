#!/usr/bin/env bash
# Runs fio and cephbench alternately on the same file with the same jobs,
# three pairs per job, and prints cephbench/fio for IOPS and mean latency.
#
#   bench/compare-fio.sh [DIR]      DIR holds the 1 GiB test file (default: a temp dir
#                                   under /var/tmp, which must allow O_DIRECT)
# Environment: RUNTIME (seconds per run, default 10), PAIRS (default 3),
# CEPHBENCH (the binary, default bin/cephbench).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNTIME=${RUNTIME:-10}
PAIRS=${PAIRS:-3}
CEPHBENCH=${CEPHBENCH:-bin/cephbench}
scripts/install-deps.sh
[ -x "$CEPHBENCH" ] || go build -o "$CEPHBENCH" ./cmd/cephbench

dir=${1:-$(mktemp -d /var/tmp/cephbench-compare.XXXXXX)}
file="$dir/compare.dat"
out=$(mktemp -d)
trap 'rm -rf "$out"; rm -f "$file"; [ -z "${1:-}" ] && rmdir "$dir" 2>/dev/null || true' EXIT

# name | fio options | cephbench options | op kind in both JSONs | cpu pin
jobs=(
  "randread-4k-psync-qd1|--rw=randread --bs=4k --direct=1 --ioengine=psync --iodepth=1|--rw randread --bs 4k --direct --iodepth 1|read|"
  "seqwrite-1M-direct|--rw=write --bs=1M --direct=1 --ioengine=psync --iodepth=1|--rw write --bs 1M --direct --iodepth 1 --force|write|"
  "null-4k-one-core|--rw=randread --bs=4k --ioengine=null --iodepth=1|--rw randread --bs 4k --iodepth 1|read|0"
)

# Lay the file out once, with fio, so both tools read the same data.
fio --name=layout --filename="$file" --size=1G --rw=write --bs=1M --direct=1 --output=/dev/null

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.3f", a / b }'; }
mean() { awk '{ s += $1 } END { if (NR) printf "%.6g", s / NR }'; }

pairs() { paste "$1" "$2" | awk '{ printf "%s%.2f", (NR > 1 ? "," : ""), ($2 ? $1 / $2 : 0) }'; }

# run_fio and run_cb run one job's turn and append its IOPS and mean latency.
run_fio() {
  # shellcheck disable=SC2086
  "${pinning[@]}" fio --name="$name" --filename="$file" --size=1G $fioopts \
    --runtime="$RUNTIME" --time_based --output-format=json >"$out/fio.json"
  jq -r ".jobs[0].$kind.iops" "$out/fio.json" >>"$out/fio.iops"
  jq -r ".jobs[0].$kind.lat_ns.mean / 1000" "$out/fio.json" >>"$out/fio.lat"
}
run_cb() {
  # shellcheck disable=SC2086
  "${pinning[@]}" "$CEPHBENCH" bench --target "$target" --size 1G $cbopts \
    --duration "${RUNTIME}s" --format json --quiet --output "$out/cb.json" >/dev/null 2>&1
  jq -r ".ops.$kind.iops.mean" "$out/cb.json" >>"$out/cb.iops"
  jq -r ".ops.$kind.latency.mean_ns / 1000" "$out/cb.json" >>"$out/cb.lat"
}
printf '%-22s %12s %12s %8s %12s %12s %8s  %s\n' job "fio IOPS" "cb IOPS" ratio "fio lat us" "cb lat us" ratio "IOPS ratio per pair"
for job in "${jobs[@]}"; do
  IFS='|' read -r name fioopts cbopts kind pin <<<"$job"
  target="$file"
  [[ $fioopts == *ioengine=null* ]] && target="null://"
  pinning=()
  [ -n "$pin" ] && pinning=(taskset -c "$pin" env GOMAXPROCS=1)
  : >"$out/fio.iops"; : >"$out/fio.lat"; : >"$out/cb.iops"; : >"$out/cb.lat"
  # Alternate which tool goes first: on a shared virtual disk the run after
  # a write run pays for the host flushing the previous one's data.
  for i in $(seq "$PAIRS"); do
    if [ $((i % 2)) -eq 1 ]; then run_fio; run_cb; else run_cb; run_fio; fi
  done
  fi=$(mean <"$out/fio.iops"); ci=$(mean <"$out/cb.iops")
  fl=$(mean <"$out/fio.lat"); cl=$(mean <"$out/cb.lat")
  printf '%-22s %12s %12s %8s %12s %12s %8s  %s\n' "$name" "$fi" "$ci" "$(ratio "$ci" "$fi")" "$fl" "$cl" "$(ratio "$cl" "$fl")" \
    "$(pairs "$out/cb.iops" "$out/fio.iops")"
done
