#!/usr/bin/env bash
# The whole test suite: installs what the tests need, checks formatting,
# vet and staticcheck, fuzzes every parser briefly, starts two sandbox Ceph
# clusters, then runs every test with the race detector. The tests named
# TestDisruptive stop OSDs, kill daemons or fill pools: they run on a
# cluster of their own, beside the others, which share the first. Both
# sandboxes are stopped and removed at the end, also when a step fails or
# the script is interrupted.
set -euo pipefail
cd "$(dirname "$0")/.."

# The Ceph engines and their tests build only with these (see Makefile).
tags=ceph,pacific

# Per sandbox: its directory, and the pid of its "sandbox up" while it starts.
sandboxes=()
up_pids=()
disruptive_pid=""
cleanup() {
  status=$?
  trap - EXIT INT TERM
  if [ -n "$disruptive_pid" ] && kill -0 "$disruptive_pid" 2>/dev/null; then
    # Its own process group (setsid): go test, the test binaries and what they started.
    kill -TERM -- "-$disruptive_pid" 2>/dev/null || true
    wait "$disruptive_pid" 2>/dev/null || true
  fi
  for pid in "${up_pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      # As Ctrl-C would: it stops the daemons it started and removes them.
      kill -INT "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  for dir in "${sandboxes[@]}"; do
    rm -f "$dir.env" "$dir.bin"
    if [ -e "$dir/sandbox.json" ]; then
      go run ./cmd/cephbench sandbox down --purge --dir "$dir" >&2 || status=1
    fi
    rmdir "$dir" 2>/dev/null || true
  done
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Each step says when it starts, in seconds since the script did.
step() { echo "== $* (at ${SECONDS}s)"; }

# start_sandbox starts a sandbox in the background in a new directory,
# whose name it appends to sandboxes; its exports go to DIR.env. bluestore
# on sparse files, as on real OSDs; 3 OSDs and pools of size 2, so that
# every PG stays active while a disruptive test stops an OSD. Built, not
# go run, so that an interrupt reaches it (it then stops and removes what
# it started).
start_sandbox() {
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/cephbench-sandbox.XXXXXX")
  sandboxes+=("$dir")
  go build -o "$dir.bin" ./cmd/cephbench
  "$dir.bin" sandbox up --dir "$dir" --osds 3 --store bluestore --osd-size 4G --mds --rgw --timeout 5m >"$dir.env" &
  up_pids+=("$!")
}

step "install what the tests need"
scripts/install-deps.sh

step "sandbox clusters, started in the background"
start_sandbox # sandboxes[0]: every test but the disruptive ones
start_sandbox # sandboxes[1]: the disruptive tests

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
step "build what the tests share"
# Built once here, so that the two go test runs below do not both build
# the packages they share.
go build -race -tags "$tags,failpoint" ./...
for pid in "${up_pids[@]}"; do
  wait "$pid"
done
up_pids=()
step go test
# Tests named TestDisruptive, on the second sandbox, one package at a time
# so that no two of them have an OSD down at once; their output is shown
# when they end. Same tags as below: nothing is built twice.
disruptive=$(grep -rl --include='*_test.go' 'func TestDisruptive' . | xargs -n1 dirname | sort -u)
disruptive_log=$(mktemp "${TMPDIR:-/tmp}/cephbench-disruptive.XXXXXX")
# shellcheck disable=SC2086
setsid bash -c 'eval "$(cat "$1.env")"; shift
  CEPHBENCH_DISRUPTIVE=1 exec go test -race -count=1 -p 1 -timeout 15m -tags "$@"' \
  _ "${sandboxes[1]}" "$tags,failpoint" -run '^TestDisruptive' $disruptive >"$disruptive_log" 2>&1 &
disruptive_pid=$!
eval "$(cat "${sandboxes[0]}.env")" # CEPHBENCH_SANDBOX, CEPH_CONF, CEPH_KEYRING, AWS_*
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
step "disruptive tests, started beside the others"
disruptive_status=0
wait "$disruptive_pid" || disruptive_status=$?
disruptive_pid=""
cat "$disruptive_log"
rm -f "$disruptive_log"
[ "$status" = 0 ] || exit "$status"
[ "$disruptive_status" = 0 ] || exit "$disruptive_status"
step "done"
