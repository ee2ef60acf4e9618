# bamgen — top-level build. `make test` is what CI runs (through .ci/run).
GO        ?= go
NVCC      ?= nvcc
FUZZTIME  ?= 20s
BIN       := bin/bamgen

.PHONY: all build test test-go lint fuzz bench clean test-kmod test-corpus test-drivers

all: build

build:
	$(GO) build -o $(BIN) ./cmd/bamgen

# Every check CI runs. Parts that need nvcc or QEMU are installed by
# .ci/install-deps.sh; see README.md.
test: lint test-go fuzz test-drivers test-corpus test-kmod

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
