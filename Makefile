# bamgen — top-level build. `make test` is what CI runs (through .ci/run).
GO        ?= go
NVCC      ?= nvcc
FUZZTIME  ?= 20s
BIN       := bin/bamgen

.PHONY: all build test test-go lint fuzz bench clean test-kmod test-corpus test-drivers test-runtime test-golden-nvcc

all: build

build:
	$(GO) build -o $(BIN) ./cmd/bamgen

# Every check CI runs. Parts that need nvcc or QEMU are installed by
# .ci/install-deps.sh; see README.md.
test: lint test-go fuzz test-drivers test-runtime test-golden-nvcc test-corpus test-kmod

# The runtime without a GPU: cache state machine and warp-emulation stress
# tests, the NVMe queue protocol against the emu controller, every header
# compiled alone for sm_80 and sm_90, libbam.a (with the nvme backend and
# its NVMe host library) and the nvme backend's errors when no device is there.
test-runtime:
	$(MAKE) -s -C runtime/cuda test-cpu
	$(MAKE) -s -C runtime/cuda -f nvme.mk test-queue-cpu
	$(MAKE) -s -C runtime/cuda check-headers
	$(MAKE) -s -C runtime/cuda lib test-nvme-backend test-backend-host

# Every golden output of `bamgen port` (testdata/port) and of `bamgen port
# --opt` (testdata/opt) compiled with nvcc against the runtime headers: the
# generated code and the runtime agree. Then bfs_thread, spmv, sssp and
# pagerank ported with --auto --ref (with and without --opt auto) from the
# corpus itself.
test-golden-nvcc:
	bench/difftest/compile_golden.sh
	rm -rf build/golden-opt && mkdir -p build/golden-opt
	BAMGEN_GOLDEN_OUT=$(CURDIR)/build/golden-opt $(GO) test -count=1 -run '^TestOptGolden$$' ./cmd/bamgen
	SRC_DIR=$(CURDIR)/build/golden-opt bench/difftest/compile_golden.sh
	bench/difftest/compile_ref_corpus.sh

# The work-assignment drivers of the rewrites, played thread by thread on the CPU.
test-drivers:
	@mkdir -p build
	$(CXX) -std=c++17 -O2 -Wall -Wextra -Werror -I runtime/cuda/include runtime/cuda/tests/work_assignment_test.cpp -o build/work_assignment_test
	build/work_assignment_test

# Every corpus program compiles with nvcc for sm_80 and sm_90, warnings as errors.
test-corpus:
	$(MAKE) -s -C testdata/kernels check-build

# The kernel module against an emulated NVMe drive in QEMU (kmod/README.md).
test-kmod:
	$(MAKE) -C kmod test

test-go:
	$(GO) test -count=1 ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Bounded fuzzing of the front end: no panic, lossless round trip.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./parse

bench:
	$(GO) test -run '^$$' -bench . -benchmem -cpu 1 ./parse ./transform

clean:
	rm -rf bin
