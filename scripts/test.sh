#!/usr/bin/env bash
# The whole test suite: installs what the tests need, checks formatting,
# vet and staticcheck, then runs every test with the race detector.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
echo "== go vet"
go vet ./...
echo "== staticcheck"
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
echo "== go test"
go test -race -count=1 -timeout 15m ./...
