#!/usr/bin/env bash
# Runs every fuzz target (func FuzzXxx in a _test.go file) for FUZZTIME
# each (default 3s), one at a time, with the Ceph build tags, and prints a
# line per target: its time, executions and result. A crash or a broken
# property fails the script; go test has then written the input under the
# package's testdata/fuzz/FuzzXxx/, where it stays as a regression seed.
# Usage: scripts/fuzz.sh [NAME_REGEXP]   (FUZZTIME=60s scripts/fuzz.sh)
# A name that is several packages' (FuzzParse, FuzzLoad) runs in each.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-3s}
# go test minimizes each new input that widens coverage for up to a
# minute; inputs of a few kilobytes (results, a cluster's JSON answers)
# widen it often, and a short run would do little else. A hundred tries
# each leaves the time to fuzzing (crashers are minimized as little).
minimize=${FUZZMINIMIZETIME:-100x}
tags=${TAGS:-ceph,pacific}
only=${1:-.}
log=$(mktemp "${TMPDIR:-/tmp}/cephbench-fuzz.XXXXXX")
trap 'rm -f "$log"' EXIT

# Go 1.26's fuzzing coordinator can report "context deadline exceeded"
# when -fuzztime ends while a worker is busy (go.dev/issue/75804); no input
# is written then. Such a run is retried once rather than failed.
run() { # name dir
  local corpus="$2/testdata/fuzz/$1" before after
  before=$(ls "$corpus" 2>/dev/null | wc -l)
  go test -tags "$tags" -run '^$' -fuzz "^$1\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "./$2" >"$log" 2>&1 && return 0
  after=$(ls "$corpus" 2>/dev/null | wc -l)
  [ "$after" = "$before" ] && grep -q '^    context deadline exceeded$' "$log" && return 2
  return 1
}

failed=0
total_start=$SECONDS
while read -r file name; do
  dir=$(dirname "$file")
  start=$SECONDS
  status=ok
  rc=0
  run "$name" "$dir" || rc=$?
  if [ "$rc" != 0 ]; then
    if [ "$rc" = 2 ] && run "$name" "$dir"; then
      status="ok (retried after go.dev/issue/75804)"
    else
      status=FAILED
      failed=1
      cat "$log" >&2
    fi
  fi
  # none when the seeds took the whole time
  execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
  printf '%-22s %-28s %4ss %10s execs  %s\n' "$name" "$dir" $((SECONDS - start)) "${execs:-?}" "$status"
done < <(grep -rE --include='*_test.go' -o '^func Fuzz[A-Za-z0-9_]*' . | sed 's|^\./||; s|:func | |' | grep -E " ($only)" | sort)
echo "fuzzing took $((SECONDS - total_start))s"
exit "$failed"
