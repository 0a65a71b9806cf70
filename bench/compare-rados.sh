#!/usr/bin/env bash
# Runs Ceph's rados bench and cephbench rados bench alternately on the same
# pool, five pairs per row, and prints cephbench/rados for bandwidth, IOPS,
# mean latency and client CPU seconds per op, and the median over the pairs
# of cephbench's whole-command CPU over rados bench's (and its spread).
#
# Each tool also runs SHORT_SECONDS, so that its CPU splits into a cost
# per op (the difference between the two runs over the difference in ops)
# and a fixed cost per run (starting, connecting, filling buffers, saving
# results): the script prints each tool's.
#
#   bench/compare-rados.sh          uses the cluster in CEPH_CONF, or starts a sandbox
# Environment: SECONDS_PER_RUN (default 10), SHORT_SECONDS (default 3), PAIRS (default 5), POOL (default
# cbcompare, created and removed), CEPHBENCH (default bin/cephbench), ROWS (a
# regular expression: only the rows whose names match; default all).
RUNTIME=${SECONDS_PER_RUN:-10}
SHORT=${SHORT_SECONDS:-3}
[ "$SHORT" -lt "$RUNTIME" ] || { echo "SHORT_SECONDS ($SHORT) must be under SECONDS_PER_RUN ($RUNTIME)" >&2; exit 2; }
PAIRS=${PAIRS:-5}
POOL=${POOL:-cbcompare}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
before_exit() { ceph osd pool rm "$POOL" "$POOL" --yes-i-really-really-mean-it >/dev/null 2>&1 || true; }
ceph osd pool create "$POOL" 32 >/dev/null 2>&1
ceph osd pool application enable "$POOL" rados >/dev/null 2>&1

# field NAME FILE: the number after "NAME:" in a rados bench summary.
field() { awk -F: -v k="$1" '$1 == k { gsub(/ /, "", $2); print $2; exit }' "$2"; }

# run TOOL MODE SECONDS ARGS...: one run; appends its CPU seconds and ops to
# $out/TOOL.SECONDS, and for a full run bandwidth, IOPS, mean latency and
# CPU seconds per op to $out/TOOL.*
run() {
  local tool=$1 mode=$2 secs=$3; shift 3
  local cmd=(rados)
  [ "$tool" = cb ] && cmd=("$CEPHBENCH" rados)
  /usr/bin/time -f "%U %S" -o "$out/time" "${cmd[@]}" bench -p "$POOL" "$secs" "$mode" "$@" >"$out/run" 2>"$out/stderr" || failed "$tool"
  local ops
  ops=$(field "Total writes made" "$out/run"); [ -n "$ops" ] || ops=$(field "Total reads made" "$out/run")
  awk -v ops="$ops" '{ print $1 + $2, ops }' "$out/time" >>"$out/$tool.$secs"
  [ "$secs" = "$RUNTIME" ] || return 0
  field "Bandwidth (MB/sec)" "$out/run" >>"$out/$tool.bw"
  awk '/^Average IOPS/ { print $NF }' "$out/run" >>"$out/$tool.iops"
  field "Average Latency(s)" "$out/run" >>"$out/$tool.lat"
  awk -v ops="$ops" '{ printf "%.9f\n", ($1 + $2) / ops }' "$out/time" >>"$out/$tool.cpu"
}

printf '%-22s %9s %9s %8s %8s %8s %12s  %-26s  %-29s  %s\n' row "rados MB/s" "cb MB/s" "bw" "IOPS" "mean lat" "CPU s/op" \
  "µs/op, marginal: rados cb" "cb/rados  fixed ms: rados cb" "CPU cb/rados, median of pairs"
row() {
  local name=$1 mode=$2; shift 2
  [[ $name =~ ${ROWS:-.} ]] || return 0
  rm -f "$out"/*.bw "$out"/*.iops "$out"/*.lat "$out"/*.cpu "$out"/*."$RUNTIME" "$out"/*."$SHORT"
  local tool tools
  for i in $(seq "$PAIRS"); do
    # Alternate which tool goes first.
    tools=(rados cb)
    [ $((i % 2)) -eq 1 ] || tools=(cb rados)
    for tool in "${tools[@]}"; do
      run "$tool" "$mode" "$RUNTIME" "$@"
      run "$tool" "$mode" "$SHORT" "$@"
    done
    [ "$mode" = write ] && rados -p "$POOL" cleanup >/dev/null 2>&1 || true
  done
  m() { marginal "$out/$1.$RUNTIME" "$out/$1.$SHORT"; }
  f() { fixed "$out/$1.$RUNTIME" "$out/$1.$SHORT"; }
  local rb cb
  rb=$(mean <"$out/rados.bw"); cb=$(mean <"$out/cb.bw")
  printf '%-22s %9s %9s %8s %8s %8s %12s  %7.1f %7.1f            %5s  %6.0f %6.0f     %s\n' "$name" "$rb" "$cb" "$(ratio "$cb" "$rb")" \
    "$(ratio "$(mean <"$out/cb.iops")" "$(mean <"$out/rados.iops")")" \
    "$(ratio "$(mean <"$out/cb.lat")" "$(mean <"$out/rados.lat")")" \
    "$(ratio "$(mean <"$out/cb.cpu")" "$(mean <"$out/rados.cpu")")" \
    "$(m rados)" "$(m cb)" "$(ratio "$(m cb)" "$(m rados)")" "$(f rados)" "$(f cb)" \
    "$(median_ratio "$out/cb.$RUNTIME" "$out/rados.$RUNTIME")"
}

row "4M write -t 16" write -t 16
rados bench -p "$POOL" "$RUNTIME" write -t 16 --no-cleanup >/dev/null 2>&1
row "4M seq -t 16" seq -t 16
row "4M rand -t 16" rand -t 16
rados -p "$POOL" cleanup >/dev/null 2>&1
row "4K write -t 16" write -t 16 -b 4K
row "4K write -t 128" write -t 128 -b 4K
