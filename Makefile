# cephbench: `make` builds bin/cephbench; `make test` runs the whole suite.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/cephbench/cephbench/result.Version=$(VERSION)

.PHONY: build test vet lint bench compare-fio memory-soak clean

build:
	go build -ldflags "$(LDFLAGS)" -o bin/cephbench ./cmd/cephbench

test:
	scripts/test.sh

vet:
	@go vet ./...

lint: vet
	@go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

# Go benchmarks of the hot paths (recording, engines' per-op cost).
bench:
	go test -run '^$$' -bench . -benchmem ./...

# cephbench against fio 3.33 on the same file and jobs; prints the ratios.
compare-fio: build
	bench/compare-fio.sh

# RSS of a 10-minute queue-depth-64 run: start vs end.
memory-soak: build
	bench/memory-soak.sh

clean:
	rm -rf bin
