#!/usr/bin/env bash
# Runs fio and `cephbench fio` alternately with identical options, PAIRS
# pairs per row (which tool goes first alternating), and prints cephbench/fio
# for IOPS, mean and p99 completion latency and client CPU seconds per op,
# the median pair and the spread of the pairs. Both print fio's JSON, which
# the same jq reads. Each row gives both tools the same buffer memory:
# fio's default (malloc, ordinary pages) unless the row names mem=.
#
#   bench/compare-fio.sh [DIR]      DIR holds the 1 GiB test file (default: a temp dir
#                                   under /var/tmp, which must allow O_DIRECT)
# Environment: RUNTIME (seconds per run, default 10), PAIRS (default 5),
# SIZE (of the test file, default 1G),
# CEPHBENCH (the binary, default bin/cephbench), ROWS (a regular expression:
# only the rows whose names match).
RUNTIME=${RUNTIME:-10}
PAIRS=${PAIRS:-5}
SIZE=${SIZE:-1G}
NO_CLUSTER=1
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

dir=${1:-}
made_dir=""
[ -n "$dir" ] || { dir=$(mktemp -d /var/tmp/cephbench-compare.XXXXXX); made_dir=$dir; }
file="$dir/compare.dat"
hugepages=$(cat /proc/sys/vm/nr_hugepages)
before_exit() {
  rm -f "$file"
  [ -z "$made_dir" ] || rmdir "$made_dir"
  echo "$hugepages" >/proc/sys/vm/nr_hugepages
}
# mem=mmaphuge maps huge pages the system reserves (fio fails without
# them): 64 of 2 MiB hold either tool's 16 buffers of 1 MiB and more.
echo $((hugepages + 64)) >/proc/sys/vm/nr_hugepages

# fio's batching options: both tools then submit 16 I/Os per system call;
# fio reaps only once 8 have completed, cephbench takes that option and
# keeps refilling its queue as each I/O completes.
batched="--iodepth_batch_submit=16 --iodepth_batch_complete_min=8"

# name | options both tools take | cpu to pin to (one core, for the null engine)
rows=(
  "4k randread psync qd1|--rw=randread --bs=4k --direct=1 --ioengine=psync --iodepth=1|"
  "4k randread libaio qd64|--rw=randread --bs=4k --direct=1 --ioengine=libaio --iodepth=64|"
  "4k randread io_uring qd64|--rw=randread --bs=4k --direct=1 --ioengine=io_uring --iodepth=64|"
  "4k randread libaio qd128|--rw=randread --bs=4k --direct=1 --ioengine=libaio --iodepth=128|"
  "4k randread io_uring qd128|--rw=randread --bs=4k --direct=1 --ioengine=io_uring --iodepth=128|"
  "4k randread libaio qd64 batched|--rw=randread --bs=4k --direct=1 --ioengine=libaio --iodepth=64 $batched|"
  "4k randread io_uring qd64 batched|--rw=randread --bs=4k --direct=1 --ioengine=io_uring --iodepth=64 $batched|"
  "4k randread libaio qd128 batched|--rw=randread --bs=4k --direct=1 --ioengine=libaio --iodepth=128 $batched|"
  "4k randread io_uring qd128 batched|--rw=randread --bs=4k --direct=1 --ioengine=io_uring --iodepth=128 $batched|"
  "1M seq write direct|--rw=write --bs=1M --direct=1 --ioengine=psync --iodepth=1|"
  "1M seq write libaio qd16|--rw=write --bs=1M --direct=1 --ioengine=libaio --iodepth=16|"
  "1M seq write libaio qd16 mmaphuge|--rw=write --bs=1M --direct=1 --ioengine=libaio --iodepth=16 --mem=mmaphuge|"
  "4k randrw 70/30 libaio qd32|--rw=randrw --rwmixread=70 --bs=4k --direct=1 --ioengine=libaio --iodepth=32|"
  "4k randread null|--rw=randread --bs=4k --ioengine=null --iodepth=1|0"
)

# Lay the file out once, with fio, so both tools read the same data. It is
# not cephbench's, so cephbench writes over it only with --force.
fio --name=layout --filename="$file" --size="$SIZE" --rw=write --bs=1M --direct=1 --output=/dev/null

# run TOOL OPTIONS PIN: one run; appends IOPS, mean and p99 completion
# latency (µs) and CPU seconds per op to $out/TOOL.*
run() {
  local tool=$1 opts=$2 pin=$3 cmd=(fio) pinning=()
  [ "$tool" = cb ] && cmd=("$CEPHBENCH" fio --force --results "$out/results")
  [ -n "$pin" ] && pinning=(taskset -c "$pin" env GOMAXPROCS=1)
  # shellcheck disable=SC2086
  /usr/bin/time -f "%U %S" -o "$out/time" "${pinning[@]}" "${cmd[@]}" --name=cmp --filename="$file" --size="$SIZE" $opts \
    --runtime="$RUNTIME" --time_based --output-format=json >"$out/run.json" 2>"$out/stderr" ||
    { cat "$out/stderr" >&2; exit 1; }
  # Mixed rows: IOPS of both kinds; latency of the kind with more ops.
  jq -r '.jobs[0] | [.read, .write] as $d | ($d | max_by(.total_ios)) as $m |
    "\($d[0].iops + $d[1].iops) \($m.clat_ns.mean / 1000) \($m.clat_ns.percentile["99.000000"] / 1000) \($d[0].total_ios + $d[1].total_ios)"' \
    "$out/run.json" >"$out/fig"
  read -r iops lat p99 ops <"$out/fig"
  echo "$iops" >>"$out/$tool.iops"
  echo "$lat" >>"$out/$tool.lat"
  echo "$p99" >>"$out/$tool.p99"
  awk -v ops="$ops" '{ printf "%.9f\n", ($1 + $2) / ops }' "$out/time" >>"$out/$tool.cpu"
}

echo "file $SIZE, $PAIRS pairs of ${RUNTIME}s runs"
printf '%-34s %10s %10s   %-29s  %6s  %-11s  %s\n' row "fio IOPS" "cb IOPS" "cb/fio: IOPS lat p99 CPU/op" median spread "IOPS cb/fio per pair"
for row in "${rows[@]}"; do
  IFS='|' read -r name opts pin <<<"$row"
  [[ $name =~ ${ROWS:-.} ]] || continue
  rm -f "$out"/*.iops "$out"/*.lat "$out"/*.p99 "$out"/*.cpu
  # On a shared virtual disk the run after a write pays for the host
  # flushing the previous one's data: alternate who goes first.
  for i in $(seq "$PAIRS"); do
    if [ $((i % 2)) -eq 1 ]; then run fio "$opts" "$pin"; run cb "$opts" "$pin"; else run cb "$opts" "$pin"; run fio "$opts" "$pin"; fi
  done
  m() { mean <"$out/$1.$2"; }
  per_pair=$(paste "$out/cb.iops" "$out/fio.iops" | awk '{ printf "%s%.2f", (NR > 1 ? "," : ""), ($2 ? $1 / $2 : 0) }')
  # On a noisy device the median pair says more than the means.
  median=$(tr , '\n' <<<"$per_pair" | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  spread=$(tr , '\n' <<<"$per_pair" | sort -g | sed -n '1p;$p' | paste -sd-)
  printf '%-34s %10.0f %10.0f   %5s %5s %5s %5s          %6s  %-11s  %s\n' "$name" "$(m fio iops)" "$(m cb iops)" \
    "$(ratio "$(m cb iops)" "$(m fio iops)")" "$(ratio "$(m cb lat)" "$(m fio lat)")" \
    "$(ratio "$(m cb p99)" "$(m fio p99)")" "$(ratio "$(m cb cpu)" "$(m fio cpu)")" "$median" "$spread" "$per_pair"
done
