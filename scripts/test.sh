#!/usr/bin/env bash
# The whole test suite: installs what the tests need, checks formatting,
# vet and staticcheck, fuzzes every parser briefly, starts one sandbox
# Ceph cluster for the tests that need a cluster, then runs every test
# with the race detector. The sandbox is stopped and removed at the end,
# also when a step fails or the script is interrupted.
set -euo pipefail
cd "$(dirname "$0")/.."

# The Ceph engines and their tests build only with these (see Makefile).
tags=ceph,pacific

sandbox=""
up_pid=""
cleanup() {
  status=$?
  trap - EXIT INT TERM
  if [ -n "$up_pid" ] && kill -0 "$up_pid" 2>/dev/null; then
    # As Ctrl-C would: it stops the daemons it started and removes them.
    kill -INT "$up_pid" 2>/dev/null || true
    wait "$up_pid" 2>/dev/null || true
  fi
  if [ -n "$sandbox" ]; then
    rm -f "$sandbox.env" "$sandbox.bin"
    if [ -e "$sandbox/sandbox.json" ]; then
      go run ./cmd/cephbench sandbox down --purge --dir "$sandbox" >&2 || status=1
    fi
    rmdir "$sandbox" 2>/dev/null || true
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Each step says when it starts, in seconds since the script did.
step() { echo "== $* (at ${SECONDS}s)"; }

step "install what the tests need"
scripts/install-deps.sh

step "sandbox cluster, started in the background"
sandbox=$(mktemp -d "${TMPDIR:-/tmp}/cephbench-sandbox.XXXXXX")
# bluestore on sparse files, as on real OSDs; 3 OSDs and pools of size 2, so
# that every PG stays active while a disruptive test stops an OSD.
# Built, not go run, so that an interrupt reaches it (it then stops and
# removes what it started).
go build -o "$sandbox.bin" ./cmd/cephbench
"$sandbox.bin" sandbox up --dir "$sandbox" --osds 3 --store bluestore --osd-size 4G --mds --rgw --timeout 5m >"$sandbox.env" &
up_pid=$!

step gofmt
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
# The tests are built with the failpoint tag (internal/failpoint): vet
# and staticcheck read that build, and the release build without it.
step go vet
go vet ./...
go vet -tags "$tags,failpoint" ./...
step staticcheck
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags "$tags,failpoint" ./...
step fuzz
# Each fuzz target for 1 s (the seeds and regression inputs run in go test
# too); make fuzz runs them longer.
FUZZTIME=1s scripts/fuzz.sh
wait "$up_pid"
up_pid=""
eval "$(cat "$sandbox.env")" # CEPHBENCH_SANDBOX, CEPH_CONF, CEPH_KEYRING, AWS_*
step go test
# Where each kill of the kill -9 tests landed, shown after the tests.
kill_log=$(mktemp "${TMPDIR:-/tmp}/cephbench-kills.XXXXXX")
export CEPHBENCH_KILL_LOG=$kill_log
# The HTML report is tested in Chromium, which install-deps.sh installs:
# here a missing browser fails the test instead of skipping it.
status=0
# internal/cli's tests take longest (about 9 minutes): named first, they
# are built and started first, and the other packages' run beside them.
CEPHBENCH_REQUIRE_BROWSER=1 go test -race -count=1 -timeout 15m -tags "$tags,failpoint" ./internal/cli ./... || status=$?
echo "kill -9 tests, each kill:"
sed 's/^/  /' "$kill_log"
rm -f "$kill_log"
[ "$status" = 0 ] || exit "$status"
# Tests named TestDisruptive stop OSDs of the sandbox or start more
# clusters; they run after the others, one package at a time, so that no
# two of them have an OSD down at once. Same tags as above: nothing is
# built twice.
step disruptive tests
disruptive=$(grep -rl --include='*_test.go' 'func TestDisruptive' . | xargs -n1 dirname | sort -u)
# shellcheck disable=SC2086
CEPHBENCH_DISRUPTIVE=1 go test -race -count=1 -p 1 -timeout 10m -tags "$tags,failpoint" -run '^TestDisruptive' $disruptive
step "done"
