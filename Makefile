# bamgen — top-level build. `make test` is what CI runs (through .ci/run).
GO        ?= go
NVCC      ?= nvcc
FUZZTIME  ?= 20s
BIN       := bin/bamgen

.PHONY: test-bench all build test test-go lint fuzz bench clean realworld test-kmod test-corpus test-drivers test-runtime test-tsan test-golden-nvcc cover mutate test-cmake test-go-install

all: build

# Quiet: `make build && bin/bamgen port -d ... > x.patch` keeps stdout clean.
# The revision is passed for builds where Go records none (worktrees,
# GOFLAGS=-buildvcs=false); `bamgen version` prints it.
REVISION  := $(shell git rev-parse HEAD 2>/dev/null)$(if $(shell git status --porcelain --untracked-files=no 2>/dev/null),+dirty)

build:
	@$(GO) build -ldflags "-X main.buildRevision=$(REVISION)" -o $(BIN) ./cmd/bamgen

# Every check CI runs. Parts that need nvcc or QEMU are installed by
# .ci/install-deps.sh; see README.md.
test: lint test-go cover fuzz test-drivers test-bench test-runtime test-tsan test-golden-nvcc test-corpus test-kmod test-cmake test-go-install

# bamgen as a CMake pre-build step (examples/graph and a project outside
# the tree, against `bamgen runtime install`), re-porting only what changed,
# bam::bam compiling the runtime, and header/library ABI skew failing to
# link. Needs cmake and nvcc; no GPU.
test-cmake: build
	tests/build/cmake.sh $(CURDIR)/$(BIN)

# `go install .../cmd/bamgen@VERSION` from an offline file-based module
# proxy: the binary reports the version and runtime ABI and carries the runtime.
test-go-install:
	tests/build/go_install.sh

# The runtime without a GPU: cache state machine and warp-emulation stress
# tests, the NVMe queue protocol against the emu controller, every header
# compiled alone for sm_80 and sm_90, libbam.a (with the nvme backend and
# its NVMe host library) and the nvme backend's errors when no device is there.
test-runtime:
	$(MAKE) -s -C runtime/cuda test-cpu
	$(MAKE) -s -C runtime/cuda -f nvme.mk test-queue-cpu
	$(MAKE) -s -C runtime/cuda check-headers
	$(MAKE) -s -C runtime/cuda lib test-nvme-backend test-backend-host

# Memory ordering: the cache state machine (cache_stress, warp_emu_test)
# and the NVMe queue protocol's CPU tests under ThreadSanitizer. Any report
# fails the step (TSan exits 66): weakening line_word::pin/publish to relaxed
# makes it fail (docs/testing.md). ~3 min for the cache part on 2 busy cores.
# The queue tests that assert speed (latency, iops_cap) are left out: TSan
# slows them 5-15x and they fail on a busy machine without any race.
TSAN_OPTIONS ?= halt_on_error=0 exitcode=66
export TSAN_OPTIONS
QUEUE_TSAN_TESTS ?= random_reads write_read wraparound fault_error fault_delay fault_reorder invalid shutdown controller_raw
test-tsan:
	$(MAKE) -s -C runtime/cuda test-cpu-tsan
	$(MAKE) -s -C runtime/cuda -f nvme.mk test-queue-tsan QUEUE_TSAN_TESTS="$(QUEUE_TSAN_TESTS)"

# Every golden output of `bamgen port` (testdata/port) and of `bamgen port
# --opt` (testdata/opt) compiled with nvcc against the runtime headers, through
# ptxas to machine code for sm_80 and sm_90: the generated code and the runtime
# agree. Then the corpus itself (bench/difftest/compile_corpus.sh): bfs_thread,
# spmv, sssp and pagerank ported with --auto --ref (with and without --opt
# auto), and every single-file corpus program with --auto --opt auto. Registers, spills and
# stack per kernel go to build/registers.txt, printed at the end; then
# bench/difftest/check_registers.sh fails the step when a kernel uses more
# than 64 registers or spills (issue 18's budget), naming kernel, arch and
# count; kernels listed in bench/difftest/registers_over_budget.txt may stay
# at their listed count until they are fixed (the list can only shrink).
# Compile errors fail it too. Each case is compiled for both archs in one
# nvcc run (the host side once; rows split per arch, a failing case compiled
# again per arch); compile_golden_test.sh checks that against a fake nvcc.
# The program goldens' cases are compiled two at a time (one nvcc process
# each), checked the same way by compile_program_golden_test.sh.
test-golden-nvcc:
	@mkdir -p build
	bash bench/difftest/test/check_registers_test.sh
	bash bench/difftest/test/compile_golden_test.sh
	bash bench/difftest/test/compile_program_golden_test.sh
	REGISTERS=$(CURDIR)/build/registers-port.txt bench/difftest/compile_golden.sh
	rm -rf build/golden-opt && mkdir -p build/golden-opt
	BAMGEN_GOLDEN_OUT=$(CURDIR)/build/golden-opt $(GO) test -count=1 -run '^TestOptGolden$$' ./transform
	REGISTERS=$(CURDIR)/build/registers-opt.txt SRC_DIR=$(CURDIR)/build/golden-opt bench/difftest/compile_golden.sh
	REGISTERS=$(CURDIR)/build/registers-corpus.txt bench/difftest/compile_corpus.sh
	BAMGEN_NVCC=1 $(GO) test -count=1 -run '^TestNvccReportsOriginalLines$$' ./cmd/bamgen
	bench/difftest/compile_program_golden.sh
	@{ head -1 build/registers-port.txt; for f in port opt corpus; do tail -n +2 build/registers-$$f.txt; done; } | awk -F '\t' '{ printf "%-28s %-6s %9s %12s %11s %6s  %s\n", $$1, $$2, $$3, $$4, $$5, $$6, $$7 }' >build/registers.txt
	@echo "== build/registers.txt: registers, spill stores/loads (bytes), stack (bytes) per kernel"
	@cat build/registers.txt
	bench/difftest/check_registers.sh build/registers-port.txt build/registers-opt.txt build/registers-corpus.txt

# The work-assignment drivers of the rewrites, played thread by thread on the CPU.
test-drivers:
	@mkdir -p build
	$(CXX) -std=c++17 -O2 -Wall -Wextra -Werror -I runtime/cuda/include runtime/cuda/tests/work_assignment_test.cpp -o build/work_assignment_test
	build/work_assignment_test

# The benchmark matrix's own machinery on the CPU: the memory-mode shim
# against a mock CUDA runtime, the runner end to end with fake programs
# (ratios, skips, a planted wrong checksum and a failing run must be
# reported), and sweep.py (one program under many environments) with the
# same fakes. No GPU; ~30 s.
test-bench:
	bash bench/matrix/test/shim_test.sh
	bash bench/matrix/test/e2e_test.sh
	bash bench/matrix/test/sweep_test.sh

# Every corpus program compiles with nvcc for sm_80 and sm_90, warnings as errors.
test-corpus:
	$(MAKE) -s -C testdata/kernels check-build

# The kernel module against an emulated NVMe drive in QEMU (kmod/README.md).
test-kmod:
	$(MAKE) -C kmod test

test-go:
	$(GO) test -count=1 ./...

# Statement coverage of the port and the rewrites: the tests of COVER_TESTS
# (the opt goldens run from transform) measured over COVER_PKGS, per
# package, failing under COVER_MIN percent (tools/covercheck). Package
# patterns, not files, so the check follows packages when they move.
COVER_PKGS  ?= ./transform/...
COVER_TESTS ?= ./transform/... ./cmd/...
COVER_MIN   ?= 90
cover:
	@mkdir -p build
	$(GO) test -count=1 -coverpkg=$$(echo $(COVER_PKGS) | tr ' ' ',') -coverprofile=build/cover.out $(COVER_TESTS) >build/cover-test.log || { cat build/cover-test.log; exit 1; }
	$(GO) run ./tools/covercheck -profile build/cover.out -min $(COVER_MIN)

# Mutation testing of the same packages (tools/mutate): plants one bug at a
# time, runs the tests, writes the kill rate and the survivors to
# docs/mutation.md. Slow (~15-30 s a mutant on 2 cores): MUTATE_SAMPLE
# mutants of each kind (comparison, negated if, dropped refusal, dropped
# edit); MUTATE_SAMPLE=0 runs all ~1,500. Not part of `make test`; run it
# in every session that changes the port or the rewrites.
MUTATE_SAMPLE ?= 25
MUTATE_SEED   ?= 1
mutate:
	$(GO) run ./tools/mutate -pkgs $$(echo $(COVER_PKGS) | tr ' ' ',') -test $$(echo $(COVER_TESTS) | tr ' ' ',') \
		-sample $(MUTATE_SAMPLE) -seed $(MUTATE_SEED) -timeout 4m -out docs/mutation.md

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Bounded fuzzing of the front end: no panic, lossless round trip.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./parse

bench:
	$(GO) test -run '^$$' -bench . -benchmem -cpu 1 ./parse ./transform

# bamgen on whole public CUDA projects (docs/realworld.md): every .cu/.cuh of
# each project directory under DIR analyzed, ported with --auto and --auto
# --opt auto, checked for no-op identity, idempotence and silent breakage
# (nvcc -c of original and output). Results in $(RW_OUT)/summary.md.
#   make realworld DIR=/work/holdout            # every subdirectory is a project
#   make realworld DIR=/work/holdout RW_FLAGS='-compile=false -j 1'
RW_OUT   ?= build/realworld
RW_FLAGS ?=
realworld: build
	@test -n "$(DIR)" || { echo "usage: make realworld DIR=dir-of-projects [RW_OUT=...] [RW_FLAGS=...]"; exit 2; }
	$(GO) run ./tools/realworld -bamgen $(BIN) -out $(RW_OUT) $(RW_FLAGS) $$(find $(DIR) -mindepth 1 -maxdepth 1 -type d | sort)

clean:
	rm -rf bin
