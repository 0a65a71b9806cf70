# cephbench: `make` builds bin/cephbench; `make test` runs the whole suite.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/cephbench/cephbench/result.Version=$(VERSION)
# The Ceph engines need librados-dev and friends (scripts/install-deps.sh).
TAGS := ceph,pacific

.PHONY: build k8s test vet lint fuzz bench compare-fio fio-examples compare-net compare-disk compare-rados compare-rbd memory-soak clean

build:
	go build -tags $(TAGS) -ldflags "$(LDFLAGS)" -o bin/cephbench ./cmd/cephbench

# cephbench-k8s: "cephbench k8s render|run", kept apart for the size of the
# Kubernetes client; cephbench finds it beside itself or on PATH.
k8s:
	go build -tags $(TAGS) -ldflags "$(LDFLAGS)" -o bin/cephbench-k8s ./cmd/cephbench-k8s

test:
	scripts/test.sh

vet:
	@go vet ./...
	@go vet -tags $(TAGS) ./...

lint: vet
	@go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags $(TAGS) ./...

# Every fuzz target for FUZZTIME each (make fuzz FUZZTIME=10m); what a
# crash leaves under testdata/fuzz/ is a regression seed to commit.
FUZZTIME ?= 60s
fuzz:
	FUZZTIME=$(FUZZTIME) TAGS=$(TAGS) scripts/fuzz.sh

# Go benchmarks of the hot paths (recording, engines' per-op cost).
bench:
	go test -tags $(TAGS) -run '^$$' -bench . -benchmem ./...

# cephbench against fio 3.33 on the same file and jobs; prints the ratios.
compare-fio: build
	bench/compare-fio.sh

# fio's examples/ job files (FIO_EXAMPLES=DIR, from a fio source tree),
# shortened, run by fio and by cephbench fio; prints what each ran and refused.
fio-examples: build
	CEPHBENCH=bin/cephbench bench/fio-examples.sh

# cephbench net against iperf3 on loopback; prints the ratios.
compare-net: build
	bench/compare-net.sh

# cephbench disk's sequential write and read against dd's, O_DIRECT, on the
# same file; prints the ratios of MB/s.
compare-disk: build
	CEPHBENCH=bin/cephbench bench/compare-disk.sh

# cephbench rados bench against Ceph's rados bench on a sandbox cluster.
compare-rados: build
	CEPHBENCH=bin/cephbench bench/compare-rados.sh

compare-rbd: build
	CEPHBENCH=bin/cephbench bench/compare-rbd.sh

# RSS of a 10-minute queue-depth-64 run: start vs end.
memory-soak: build
	bench/memory-soak.sh

clean:
	rm -rf bin
