#!/usr/bin/env bash
# Runs iperf3 and `cephbench net` alternately on loopback (127.0.0.1), PAIRS
# pairs per row (which tool goes first alternating), and prints each tool's
# receiver throughput in Gbits/sec (10^9 bits/s, as iperf3 prints it), the
# ratio cephbench/iperf3 (the target is 0.9 or more) and each side's sender
# retransmits. Both servers run for the whole script and are stopped at
# the end. cephbench's ping-pong phase is off (--rtt 0): only the data flow
# is compared.
#
#   bench/compare-net.sh
# Environment: RUNTIME (seconds per run, default 10), PAIRS (default 3),
# CEPHBENCH (the binary, default bin/cephbench), ROWS (a regular expression:
# only the rows whose names match), IPERF_PORT and CB_PORT (default 15201
# and 15202).
RUNTIME=${RUNTIME:-10}
PAIRS=${PAIRS:-3}
IPERF_PORT=${IPERF_PORT:-15201}
CB_PORT=${CB_PORT:-15202}
NO_CLUSTER=1
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

# name | iperf3 options | cephbench net client options | jq path of the measured direction
rows=(
  "1 stream|||up"
  "4 streams|-P 4|--parallel 4|up"
  "1 stream reverse|-R|--reverse|down"
)

listening() { [ -n "$(ss -Hltn "sport = :$1")" ]; }
for port in "$IPERF_PORT" "$CB_PORT"; do
  if listening "$port"; then
    echo "port $port is in use: set IPERF_PORT or CB_PORT" >&2
    exit 1
  fi
done
iperf_pid="" cb_pid=""
before_exit() {
  for pid in $iperf_pid $cb_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
iperf3 -s -B 127.0.0.1 -p "$IPERF_PORT" >"$out/iperf3-server.log" 2>&1 &
iperf_pid=$!
"$CEPHBENCH" net server --listen "127.0.0.1:$CB_PORT" >"$out/cb-server.log" 2>&1 &
cb_pid=$!
for _ in $(seq 100); do
  listening "$IPERF_PORT" && listening "$CB_PORT" && break
  sleep 0.1
done
if ! listening "$IPERF_PORT" || ! listening "$CB_PORT"; then
  cat "$out"/*-server.log >&2
  exit 1
fi

# run TOOL IPERF_OPTS CB_OPTS DIR: one run; appends its Gbits/sec and
# retransmits to $out/TOOL.gbps and $out/TOOL.retr
run() {
  local tool=$1 iperf_opts=$2 cb_opts=$3 dir=$4
  if [ "$tool" = iperf3 ]; then
    # shellcheck disable=SC2086
    iperf3 -c 127.0.0.1 -p "$IPERF_PORT" -t "$RUNTIME" -J $iperf_opts >"$out/run.json" 2>"$out/stderr" ||
      { cat "$out/run.json" "$out/stderr" >&2; exit 1; }
    jq -r '"\(.end.sum_received.bits_per_second / 1e9) \(.end.sum_sent.retransmits)"' "$out/run.json" >"$out/fig"
  else
    # shellcheck disable=SC2086
    "$CEPHBENCH" net client 127.0.0.1 -p "$CB_PORT" -t "$RUNTIME" --rtt 0 -q --format json \
      --results "$out/results" $cb_opts >"$out/run.json" 2>"$out/stderr" || { cat "$out/stderr" >&2; exit 1; }
    jq -r --arg d "$dir" '.[$d] | "\(.receiver.bits_per_sec / 1e9) \(.sender.retransmits // 0)"' "$out/run.json" >"$out/fig"
  fi
  read -r gbps retr <"$out/fig"
  echo "$gbps" >>"$out/$tool.gbps"
  echo "$retr" >>"$out/$tool.retr"
}

printf '%-18s %12s %12s %10s %11s %10s   %s\n' row "iperf3 Gb/s" "cb Gb/s" "cb/iperf3" "iperf3 retr" "cb retr" "cb/iperf3 per pair"
for row in "${rows[@]}"; do
  IFS='|' read -r name iperf_opts cb_opts dir <<<"$row"
  [[ $name =~ ${ROWS:-.} ]] || continue
  rm -f "$out"/*.gbps "$out"/*.retr
  for i in $(seq "$PAIRS"); do
    if [ $((i % 2)) -eq 1 ]; then
      run iperf3 "$iperf_opts" "$cb_opts" "$dir"; run cb "$iperf_opts" "$cb_opts" "$dir"
    else
      run cb "$iperf_opts" "$cb_opts" "$dir"; run iperf3 "$iperf_opts" "$cb_opts" "$dir"
    fi
  done
  m() { mean <"$out/$1.$2"; }
  per_pair=$(paste "$out/cb.gbps" "$out/iperf3.gbps" | awk '{ printf "%s%.2f", (NR > 1 ? "," : ""), ($2 ? $1 / $2 : 0) }')
  printf '%-18s %12.2f %12.2f %10s %11.0f %10.0f   %s\n' "$name" "$(m iperf3 gbps)" "$(m cb gbps)" \
    "$(ratio "$(m cb gbps)" "$(m iperf3 gbps)")" "$(m iperf3 retr)" "$(m cb retr)" "$per_pair"
done
