# Shared by the bench/compare-*.sh scripts, which source it: the packages,
# a cephbench with the Ceph engines, a scratch folder ($out), and unless the
# script sets NO_CLUSTER=1 a cluster (the one in CEPH_CONF, or a sandbox
# started here), all cleaned up on exit after the script's own before_exit.
# Also: mean, ratio, marginal, fixed, median_ratio.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
if [ -z "${CEPHBENCH:-}" ]; then
  CEPHBENCH=bin/cephbench
  go build -tags ceph,pacific -o "$CEPHBENCH" ./cmd/cephbench
fi
CEPHBENCH=$(realpath "$CEPHBENCH")

out=$(mktemp -d)
sandbox=""
before_exit() { :; }
cleanup() {
  before_exit
  [ -n "$sandbox" ] && "$CEPHBENCH" sandbox down --dir "$sandbox" --purge >/dev/null 2>&1
  rm -rf "$out"
}
trap cleanup EXIT
if [ -z "${NO_CLUSTER:-}" ] && [ -z "${CEPH_CONF:-}" ]; then
  sandbox="$out/sandbox"
  "$CEPHBENCH" sandbox up --dir "$sandbox" --osds 3 --osd-size 8G >&2 # 4K random writes grow BlueStore metadata by gigabytes
  eval "$("$CEPHBENCH" sandbox env --dir "$sandbox")"
fi

# failed TOOL: a run of TOOL failed; says why and stops.
failed() {
  echo "$1 failed: $(head -1 "$out/time" 2>/dev/null)" >&2
  tail -5 "$out/stderr" "$out/run" >&2
  exit 1
}
mean() { awk '{ s += $1 } END { if (NR) printf "%.6g", s / NR }'; }
# marginal LONG SHORT, fixed LONG SHORT: from files of "CPU-seconds ops" lines,
# one per run of a longer and a shorter kind, paired by line: the mean CPU
# µs per op beyond the shorter run's, and the mean CPU ms a run costs
# besides its ops.
marginal() { paste -d' ' "$1" "$2" | awk '{ print ($1 - $3) / ($2 - $4) * 1e6 }' | mean; }
fixed() { paste -d' ' "$1" "$2" | awk '{ print ($3 - ($1 - $3) / ($2 - $4) * $4) * 1e3 }' | mean; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0 || a == "" || b == "") print "n/a"; else printf "%.3f", a / b }'; }
# median_ratio A B: from files of "CPU-seconds ops" lines paired by line
# (one per round), the median of A's CPU over B's, and their spread.
median_ratio() {
  paste -d' ' "$1" "$2" | awk '{ print ($3 ? $1 / $3 : 0) }' | sort -g |
    awk '{ v[NR] = $1 } END { if (!NR) { print "n/a"; exit }
      printf "%.3f (%.2f-%.2f)", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR] }'
}

