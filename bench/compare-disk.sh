#!/usr/bin/env bash
# Runs report 003's disk baseline, dd with oflag=direct then iflag=direct,
# and `cephbench disk`'s sequential write and read steps on the same file,
# alternately, PAIRS pairs (which tool goes first alternating), and prints
# cephbench/dd for MB/s. Both figures are bytes over seconds: dd's from its
# "N bytes ... copied, S s" line (its MB/s is rounded to three digits),
# cephbench's from its JSON results.
#
# Both tools' buffers are in ordinary 4K pages (cephbench's default buffer
# memory, malloc): where the disk is fast (a host-cached virtual disk),
# pinning 1024 pages per 4M op costs more than the disk does, and huge pages
# in one tool only would be that difference, not the tool's.
#
#   bench/compare-disk.sh [DIR]     DIR holds the test file (default: a temp dir
#                                   under /var/tmp, which must allow O_DIRECT)
# Environment: COUNT (4M blocks, default 256: 1 GiB), PAIRS (default 3),
# DURATION (cephbench's bound per step, default 10s; its random steps run that
# long too, and its sequential ones must cover the file before it), CEPHBENCH
# (the binary, default bin/cephbench), THROTTLE (bytes a second, e.g. 100M:
# both tools run in a cgroup that caps the disk at that rate, so that the
# device and not the tool is the limit, as on a real disk slower than the
# host's cache).
COUNT=${COUNT:-256}
PAIRS=${PAIRS:-3}
DURATION=${DURATION:-10s}
NO_CLUSTER=1
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

dir=${1:-}
made_dir=""
[ -n "$dir" ] || { dir=$(mktemp -d /var/tmp/cephbench-compare-disk.XXXXXX); made_dir=$dir; }
file="$dir/compare-disk.dat"
throttle_cg=""
before_exit() {
  rm -f "$file"
  [ -z "$made_dir" ] || rmdir "$made_dir"
  [ -z "$throttle_cg" ] || rmdir "$throttle_cg"
}

if [ -n "${THROTTLE:-}" ]; then
  bps=$(numfmt --from=iec "$THROTTLE")
  # Throttles apply to whole disks: the file system's disk, not its partition.
  dev=$(stat -c '%Hd:%Ld' "$dir")
  parent=$(lsblk -no PKNAME "/dev/block/$dev" 2>/dev/null | head -1 || true)
  [ -z "$parent" ] || dev=$(lsblk -dno MAJ:MIN "/dev/$parent" | tr -d ' ')
  if [ -d /sys/fs/cgroup/blkio ]; then
    throttle_cg=/sys/fs/cgroup/blkio/cephbench-compare-disk.$$
    mkdir "$throttle_cg"
    echo "$dev $bps" >"$throttle_cg/blkio.throttle.read_bps_device"
    echo "$dev $bps" >"$throttle_cg/blkio.throttle.write_bps_device"
  else
    echo +io >/sys/fs/cgroup/cgroup.subtree_control
    throttle_cg=/sys/fs/cgroup/cephbench-compare-disk.$$
    mkdir "$throttle_cg"
    echo "$dev rbps=$bps wbps=$bps" >"$throttle_cg/io.max"
  fi
fi

# in_cg CMD...: runs CMD in the throttling cgroup, if there is one.
in_cg() {
  if [ -n "$throttle_cg" ]; then
    # shellcheck disable=SC2016 # $$ and $0 are the inner shell's
    bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$throttle_cg" "$@"
  else
    "$@"
  fi
}

# dd_run KIND ARGS...: one dd; appends its MB/s to $out/dd.KIND.
dd_run() {
  local kind=$1
  shift
  LC_ALL=C in_cg dd "$@" bs=4M 2>"$out/dd.err" || { cat "$out/dd.err" >&2; exit 1; }
  awk '/ bytes .* copied, / { for (i = 2; i <= NF; i++) if ($i == "s,") printf "%.6f\n", $1 / $(i - 1) / 1e6 }' \
    "$out/dd.err" >>"$out/dd.$kind"
}

# run_dd: dd writes a new file of COUNT blocks, then reads it.
run_dd() {
  rm -f "$file"
  dd_run write if=/dev/zero of="$file" count="$COUNT" oflag=direct
  dd_run read if="$file" of=/dev/null iflag=direct
  rm -f "$file"
}

# run_cb TAG [WRAPPER...]: cephbench disk on the same (absent) file, which
# it creates and removes; appends the MB/s of its write and read steps to
# $out/TAG.*.
run_cb() {
  local tag=$1 results step kind json=()
  shift
  results=$(mktemp -d "$out/results.XXXXXX")
  in_cg "$@" "$CEPHBENCH" disk "$file" --size "$((COUNT * 4))M" --bs 4M --duration "$DURATION" --quiet \
    --results "$results" >"$out/cb.out" 2>&1 || { cat "$out/cb.out" >&2; exit 1; }
  for step in 01-disk-seqwrite-4M:write 02-disk-seqread-4M:read; do
    kind=${step#*:}
    json=("$results"/*-disk/"${step%:*}".json)
    if [ "$(jq -r .stop_reason "${json[0]}")" != bytes ]; then
      echo "cephbench's ${step%:*} stopped at its duration before covering the file: raise DURATION or lower COUNT" >&2
      exit 1
    fi
    jq -r --arg k "$kind" '.ops[$k].bytes / .elapsed_seconds / 1e6' "${json[0]}" >>"$out/$tag.$kind"
  done
}

# On a shared virtual disk the run after a write pays for the host
# flushing the previous one's data: alternate who goes first.
for i in $(seq "$PAIRS"); do
  if [ $((i % 2)) -eq 1 ]; then run_dd; run_cb cb; else run_cb cb; run_dd; fi
done

printf '%s x 4M blocks, O_DIRECT, %s pairs, in %s%s\n' "$COUNT" "$PAIRS" "$dir" "${THROTTLE:+, the disk throttled to $THROTTLE/s}"
printf '%-30s %10s %10s %7s   %s\n' row "dd MB/s" "cb MB/s" "cb/dd" "cb/dd per pair"
for kind in write read; do
  per_pair=$(paste "$out/cb.$kind" "$out/dd.$kind" | awk '{ printf "%s%.3f", (NR > 1 ? "," : ""), ($2 ? $1 / $2 : 0) }')
  dd_mean=$(mean <"$out/dd.$kind")
  cb_mean=$(mean <"$out/cb.$kind")
  printf '%-30s %10.1f %10.1f %7s   %s\n' "4M seq $kind" "$dd_mean" "$cb_mean" "$(ratio "$cb_mean" "$dd_mean")" "$per_pair"
done
