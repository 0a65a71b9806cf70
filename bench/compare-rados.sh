#!/usr/bin/env bash
# Runs Ceph's rados bench and cephbench rados bench alternately on the same
# pool, three pairs per row, and prints cephbench/rados for bandwidth, IOPS,
# mean latency and client CPU seconds per op.
#
#   bench/compare-rados.sh          uses the cluster in CEPH_CONF, or starts a sandbox
# Environment: SECONDS_PER_RUN (default 10), PAIRS (default 3), POOL (default
# cbcompare, created and removed), CEPHBENCH (default bin/cephbench), ROWS (a
# regular expression: only the rows whose names match; default all).
RUNTIME=${SECONDS_PER_RUN:-10}
PAIRS=${PAIRS:-3}
POOL=${POOL:-cbcompare}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
before_exit() { ceph osd pool rm "$POOL" "$POOL" --yes-i-really-really-mean-it >/dev/null 2>&1 || true; }
ceph osd pool create "$POOL" 32 >/dev/null 2>&1
ceph osd pool application enable "$POOL" rados >/dev/null 2>&1

# field NAME FILE: the number after "NAME:" in a rados bench summary.
field() { awk -F: -v k="$1" '$1 == k { gsub(/ /, "", $2); print $2; exit }' "$2"; }

# run TOOL MODE ARGS...: one run; appends bandwidth, IOPS, mean latency and
# CPU seconds per op to $out/TOOL.*
run() {
  local tool=$1 mode=$2; shift 2
  local cmd=(rados)
  [ "$tool" = cb ] && cmd=("$CEPHBENCH" rados)
  /usr/bin/time -f "%U %S" -o "$out/time" "${cmd[@]}" bench -p "$POOL" "$RUNTIME" "$mode" "$@" >"$out/run" 2>"$out/stderr" || failed "$tool"
  local ops
  ops=$(field "Total writes made" "$out/run"); [ -n "$ops" ] || ops=$(field "Total reads made" "$out/run")
  field "Bandwidth (MB/sec)" "$out/run" >>"$out/$tool.bw"
  awk '/^Average IOPS/ { print $NF }' "$out/run" >>"$out/$tool.iops"
  field "Average Latency(s)" "$out/run" >>"$out/$tool.lat"
  awk -v ops="$ops" '{ printf "%.9f\n", ($1 + $2) / ops }' "$out/time" >>"$out/$tool.cpu"
}

printf '%-22s %9s %9s %8s %8s %8s %12s  %s\n' row "rados MB/s" "cb MB/s" "bw" "IOPS" "mean lat" "CPU s/op" "(cephbench/rados)"
row() {
  local name=$1 mode=$2; shift 2
  [[ $name =~ ${ROWS:-.} ]] || return 0
  rm -f "$out"/*.bw "$out"/*.iops "$out"/*.lat "$out"/*.cpu
  for i in $(seq "$PAIRS"); do
    # Alternate which tool goes first.
    if [ $((i % 2)) -eq 1 ]; then run rados "$mode" "$@"; run cb "$mode" "$@"; else run cb "$mode" "$@"; run rados "$mode" "$@"; fi
    [ "$mode" = write ] && rados -p "$POOL" cleanup >/dev/null 2>&1 || true
  done
  local rb cb
  rb=$(mean <"$out/rados.bw"); cb=$(mean <"$out/cb.bw")
  printf '%-22s %9s %9s %8s %8s %8s %12s\n' "$name" "$rb" "$cb" "$(ratio "$cb" "$rb")" \
    "$(ratio "$(mean <"$out/cb.iops")" "$(mean <"$out/rados.iops")")" \
    "$(ratio "$(mean <"$out/cb.lat")" "$(mean <"$out/rados.lat")")" \
    "$(ratio "$(mean <"$out/cb.cpu")" "$(mean <"$out/rados.cpu")")"
}

row "4M write -t 16" write -t 16
rados bench -p "$POOL" "$RUNTIME" write -t 16 --no-cleanup >/dev/null 2>&1
row "4M seq -t 16" seq -t 16
row "4M rand -t 16" rand -t 16
rados -p "$POOL" cleanup >/dev/null 2>&1
row "4K write -t 16" write -t 16 -b 4K
row "4K write -t 128" write -t 128 -b 4K
