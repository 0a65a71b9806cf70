#!/usr/bin/env bash
# How close to their time cephbench's pacer issues ops: null:// (ops that
# take no time) paced open loop at each RATE, so that the latency from each
# op's intended start is the pacer's own lateness. Prints per rate the mean
# and p99 latency, the pacer's lag (ops that waited for their time) and the
# client's CPU per op; then fio's and cephbench's think time of 1 ms after
# each of 64 ops, side by side, against the 64 ms they should take.
#
#   bench/pacer.sh
# Environment: RUNTIME (seconds per rate, default 5), RATES (default
# "100 1000 10000 100000"), ROUNDS (think-time runs per tool, default 5),
# CEPHBENCH (the binary, default bin/cephbench).
RUNTIME=${RUNTIME:-5}
RATES=${RATES:-100 1000 10000 100000}
ROUNDS=${ROUNDS:-5}
NO_CLUSTER=1
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

printf '%-10s %10s %12s %12s %14s %12s %12s\n' "ops/s" ops "lat mean" "lat p99" "pacer lag p99" "late ops" "CPU/op"
for rate in $RATES; do
  rm -rf "$out/results"
  "$CEPHBENCH" bench --target null:// --rate "$rate" --duration "${RUNTIME}s" --results "$out/results" >"$out/run" 2>"$out/stderr" ||
    failed cephbench
  jq -r --arg rate "$rate" '
    def p99: .percentiles_ns[] | select(.p == 99) | .ns;
    .ops.read as $r |
    [$rate, $r.ops, $r.latency.mean_ns, ($r.latency | p99),
     ((.pacer_lag.lag // {percentiles_ns: [{p: 99, ns: 0}]}) | p99),
     (.late_ops // 0), ((.cpu.user_seconds + .cpu.system_seconds) / $r.ops * 1e9)] |
    @tsv' "$out/results"/*.json |
    awk -F'\t' '{ printf "%-10s %10s %10.1fµs %10.1fµs %12.1fµs %12s %10.2fµs\n", $1, $2, $3 / 1e3, $4 / 1e3, $5 / 1e3, $6, $7 / 1e3 }'
done

# Think time: 1 ms after each of 64 ops that take no time. fio's JSON
# gives the job's runtime in ms; cephbench fio prints the same JSON.
echo
echo "think time 1 ms x 64 ops (want 64 ms): job runtime in ms, per round"
think="--name=think --ioengine=null --size=1m --bs=4k --rw=read --thinktime=1000 --thinktime_blocks=1 --number_ios=64"
for tool in fio cephbench; do
  cmd=(fio)
  [ "$tool" = cephbench ] && cmd=("$CEPHBENCH" fio --results "$out/results")
  runs=()
  for _ in $(seq "$ROUNDS"); do
    # shellcheck disable=SC2086
    "${cmd[@]}" $think --output-format=json >"$out/run.json" 2>"$out/stderr" || failed "$tool"
    runs+=("$(jq -r '.jobs[0].job_runtime' "$out/run.json")")
  done
  median=$(printf '%s\n' "${runs[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  printf '  %-10s median %s ms  (%s)\n' "$tool" "$median" "${runs[*]}"
done
