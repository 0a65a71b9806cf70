#!/usr/bin/env bash
# Runs Ceph's rbd bench, fio's rbd engine and cephbench rbd bench in turn on
# the same image, five rounds per row (the order rotating), and prints
# cephbench/peer for IOPS, mean and p99 latency and client CPU seconds per
# op, and the median over the rounds of cephbench's whole-command CPU over
# rbd bench's (and its spread). All three run librbd's cache as they do by
# default: in writeback.
#
# Each tool also runs a quarter of each row's total, so that its CPU splits
# into a cost per op (the difference between the two runs over the
# difference in ops) and a fixed cost per run (starting, connecting,
# filling buffers, saving results), which weighs on a row of few ops: the
# script prints cephbench/peer for the first and each tool's second.
#
#   bench/compare-rbd.sh           uses the cluster in CEPH_CONF, or starts a sandbox
# Environment: ROUNDS (default 5), POOL (default cbcompare-rbd, created and
# removed), CEPHBENCH (default bin/cephbench), ROWS (a regular expression: only
# the rows whose names match).
ROUNDS=${ROUNDS:-5}
POOL=${POOL:-cbcompare-rbd}
IMAGE=bench
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
before_exit() { ceph osd pool rm "$POOL" "$POOL" --yes-i-really-really-mean-it >/dev/null 2>&1 || true; }
ceph osd pool create "$POOL" 32 >/dev/null 2>&1
rbd pool init "$POOL"
rbd create -p "$POOL" "$IMAGE" --size 1G
# Every extent written, so reads reach the OSDs.
rbd bench -p "$POOL" "$IMAGE" --io-type write --io-size 4M --io-threads 16 --io-total 1G --io-pattern seq >/dev/null
# fio's rbd engine reads ceph.conf from the current directory (it does not
# look at CEPH_CONF).
mkdir "$out/fio" && ln -s "$(realpath "$CEPH_CONF")" "$out/fio/ceph.conf"

cpu() { awk -v ops="$1" '{ printf "%.9f\n", ($1 + $2) / ops }' "$out/time"; }

# run TOOL TYPE PATTERN BS DEPTH TOTAL [short]: one run; appends IOPS, mean
# and p99 latency (ms) and CPU seconds per op to $out/TOOL.*, and its CPU
# seconds and ops to $out/TOOL.full, or with short only the last to
# $out/TOOL.short.
run() {
  local tool=$1 type=$2 pattern=$3 bs=$4 depth=$5 total=$6 short=${7:-} ops iops lat p99
  case $tool in
  rbd)
    /usr/bin/time -f "%U %S" -o "$out/time" rbd bench -p "$POOL" "$IMAGE" --io-type "$type" --io-size "$bs" \
      --io-threads "$depth" --io-total "$total" --io-pattern "$pattern" >"$out/run" 2>"$out/stderr" || failed "$tool"
    ops=$(awk '/^elapsed:/ { print $4 }' "$out/run")
    iops=$(awk '/^elapsed:/ { print $6 }' "$out/run")
    lat=$(awk -v d="$depth" -v i="$iops" 'BEGIN { printf "%.6g", d / i * 1000 }') # Little's law
    p99=""
    ;;
  fio)
    local rw=$type
    [ "$pattern" = rand ] && rw=rand$type
    (cd "$out/fio" && /usr/bin/time -f "%U %S" -o "$out/time" fio --name=cmp --ioengine=rbd --clientname=admin \
      --pool="$POOL" --rbdname="$IMAGE" --rw="$rw" --bs="$bs" --iodepth="$depth" --io_size="$total" \
      --output-format=json >"$out/run" 2>"$out/stderr") || failed "$tool"
    local k=".jobs[0].$type"
    ops=$(jq "$k.total_ios" "$out/run")
    iops=$(jq "$k.iops" "$out/run")
    lat=$(jq "$k.clat_ns.mean / 1e6" "$out/run")
    p99=$(jq "$k.clat_ns.percentile[\"99.000000\"] / 1e6" "$out/run")
    ;;
  cb)
    /usr/bin/time -f "%U %S" -o "$out/time" "$CEPHBENCH" rbd bench -p "$POOL" "$IMAGE" --io-type "$type" --io-size "$bs" \
      --io-threads "$depth" --io-total "$total" --io-pattern "$pattern" --results "$out/res" >"$out/run" 2>"$out/stderr" || failed "$tool"
    local r k=".ops.$type"
    r=$(ls -t "$out"/res/*.json | head -1)
    ops=$(jq "$k.ops" "$r")
    iops=$(jq "$k.ops / .elapsed_seconds" "$r")
    lat=$(jq "$k.latency.mean_ns / 1e6" "$r")
    p99=$(jq "[$k.latency.percentiles_ns[] | select(.p == 99)][0].ns / 1e6" "$r")
    ;;
  esac
  awk -v ops="$ops" '{ print $1 + $2, ops }' "$out/time" >>"$out/$tool.${short:-full}"
  [ -z "$short" ] || return 0
  echo "$iops" >>"$out/$tool.iops"
  echo "$lat" >>"$out/$tool.lat"
  [ -n "$p99" ] && echo "$p99" >>"$out/$tool.p99"
  cpu "$ops" >>"$out/$tool.cpu"
}

printf '%-22s %8s %8s %8s   %-29s %-29s  %-25s  %-29s  %s\n' row "rbd IOPS" "fio IOPS" "cb IOPS" "cb/rbd: IOPS lat p99 CPU/op" \
  "cb/fio: IOPS lat p99 CPU/op" "µs/op, marginal: rbd fio cb" "cb/best  fixed ms: rbd fio cb" "CPU cb/rbd, median of rounds"
# row NAME TYPE PATTERN BS DEPTH TOTAL SHORT: SHORT is the shorter run's total.
row() {
  local name=$1 short=$7
  [[ $name =~ ${ROWS:-.} ]] || return 0
  rm -f "$out"/*.iops "$out"/*.lat "$out"/*.p99 "$out"/*.cpu "$out"/*.full "$out"/*.short
  local tools=(rbd fio cb) args=("${@:2:5}")
  for i in $(seq "$ROUNDS"); do
    for j in 0 1 2; do
      run "${tools[$(((i + j) % 3))]}" "${args[@]}"
      run "${tools[$(((i + j) % 3))]}" "${args[@]:0:4}" "$short" short
    done
  done
  local m
  m() { [ -f "$out/$1.$2" ] && mean <"$out/$1.$2" || true; }
  mc() { marginal "$out/$1.full" "$out/$1.short"; }
  fc() { fixed "$out/$1.full" "$out/$1.short"; }
  local cmp=()
  for peer in rbd fio; do
    cmp+=("$(printf '%5s %5s %5s %5s' "$(ratio "$(m cb iops)" "$(m "$peer" iops)")" "$(ratio "$(m cb lat)" "$(m "$peer" lat)")" \
      "$(ratio "$(m cb p99)" "$(m "$peer" p99)")" "$(ratio "$(m cb cpu)" "$(m "$peer" cpu)")")")
  done
  local best
  best=$(printf '%s\n%s\n' "$(mc rbd)" "$(mc fio)" | sort -g | head -1)
  printf '%-22s %8.0f %8.0f %8.0f   %-29s %-29s  %7.1f %7.1f %7.1f     %5s  %6.0f %6.0f %6.0f     %s\n' "$name" "$(m rbd iops)" "$(m fio iops)" \
    "$(m cb iops)" "${cmp[0]}" "${cmp[1]}" "$(mc rbd)" "$(mc fio)" "$(mc cb)" "$(ratio "$(mc cb)" "$best")" \
    "$(fc rbd)" "$(fc fio)" "$(fc cb)" "$(median_ratio "$out/cb.full" "$out/rbd.full")"
}

row "4K randwrite qd 32" write rand 4K 32 256M 64M
row "4K randread qd 32" read rand 4K 32 256M 64M
row "4M seq write qd 16" write seq 4M 16 1G 256M
