#!/usr/bin/env bash
# Compile every expected output of the port golden tests (testdata/port/*.txtar)
# with nvcc against the bundled runtime headers, for each architecture. This is
# what proves that bamgen's output and runtime/cuda/include agree (DESIGN.md §3).
#
#   bench/difftest/compile_golden.sh            # sm_80 and sm_90
#   ARCHS="sm_80" JOBS=4 bench/difftest/compile_golden.sh
#   FULL=0 bench/difftest/compile_golden.sh     # PTX only: no ptxas, no register table
#   REGISTERS=build/registers-port.txt bench/difftest/compile_golden.sh
#   CASES='host_*' bench/difftest/compile_golden.sh  # only cases matching a glob
#   NVCC=/usr/local/cuda/bin/nvcc bench/difftest/compile_golden.sh
#   SRC_DIR=dir bench/difftest/compile_golden.sh  # compile DIR/*.cu made by
#       BAMGEN_GOLDEN_OUT=dir go test ./transform -run TestGolden elsewhere
#
# Compile only (-c): no GPU needed. By default (FULL=1) device code goes
# through ptxas to machine code for each sm_XX (-gencode
# arch=compute_XX,code=sm_XX), so register blow-ups and the codegen errors
# only ptxas finds show up, and `-Xptxas -v` gives each kernel's registers,
# spill stores/loads and stack frame: one row per kernel in $REGISTERS
# (default $OUT/registers.txt; columns case, arch, registers, spill stores,
# spill loads, stack bytes, kernel). Register counts do not fail this script
# (check_registers.sh checks the table against the budget); compile errors do. FULL=0 stops at PTX
# (compute_XX embedded), seconds per case instead of tens. Cases whose port
# reports errors (their output equals the input) are compiled too: the input
# must build as well.
# All archs of a case go through one nvcc run (one -gencode per arch): the
# host side is preprocessed, parsed and compiled once, not once per arch
# (about 25% less CPU time for sm_80 and sm_90); the table is the one a run
# per arch gives, byte for byte. A case whose run fails is compiled again
# once per arch, so each arch passes or fails on its own with its own log.
# Prints one line per case and arch, then "N passed, N failed"; exits 1 on any
# failure. Logs of failures are kept in $OUT/NAME.ARCH.log.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ARCHS=${ARCHS:-"sm_80 sm_90"}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bamgen-golden.XXXXXX")}
NVCCFLAGS=${NVCCFLAGS:-"-std=c++17 -O1"}
FULL=${FULL:-1}
REGISTERS=${REGISTERS:-}

if ! [ -x "$NVCC" ] && ! command -v "$NVCC" >/dev/null; then
	echo "compile_golden: nvcc not found (set NVCC=/path/to/nvcc)" >&2
	exit 2
fi
mkdir -p "$OUT/src" "$OUT/usage"

# The golden test writes each case's ported file when BAMGEN_GOLDEN_OUT is set;
# it also fails if an output drifted from its golden, so a stale golden is
# caught before nvcc runs.
if [ -n "${SRC_DIR:-}" ]; then # outputs made elsewhere (machines without Go)
	cp "$SRC_DIR"/*.cu "$OUT/src/"
elif ! (cd "$ROOT" && BAMGEN_GOLDEN_OUT="$OUT/src" go test ./transform -run '^TestGolden$' -count=1 >/dev/null); then
	echo "compile_golden: go test ./transform -run TestGolden failed; fix the goldens first" >&2
	exit 1
fi

# One nvcc run per case and arch, as a fallback (see compile_case).
compile_one() { # NAME ARCH
	local name=$1 arch=$2
	local log="$OUT/$name.$arch.log"
	local target="-gencode arch=compute_${arch#sm_},code=compute_${arch#sm_}"
	[ "$FULL" = 1 ] && target="-gencode arch=compute_${arch#sm_},code=$arch -Xptxas -v"
	if nvcc_rdc "$log" "$OUT/$name.$arch.o" $target "$OUT/src/$name.cu"; then
		echo "ok   $name $arch"
		[ "$FULL" = 1 ] && "$ROOT/bench/difftest/ptxas_usage.sh" "$name" <"$log" >"$OUT/usage/$name.$arch.tsv"
		rm -f "$log" "$OUT/$name.$arch.o"
	else
		echo "FAIL $name $arch (log: $log)"
		grep -v '^ptxas info\|^    [0-9]* bytes stack frame' "$log" | head -20 | sed 's/^/     /'
	fi
}

# nvcc -c SRC -o OBJ with TARGET flags, output to LOG. A case whose source
# launches kernels from device code or calls a __device__ function defined
# in another file needs separate compilation (-rdc=true), as its original
# does: retried with it.
nvcc_rdc() { # LOG OBJ TARGET-FLAGS... SRC
	local log=$1 obj=$2
	shift 2
	local src=${*: -1} flags=("${@:1:$#-1}")
	"$NVCC" $NVCCFLAGS "${flags[@]}" -I"$ROOT/runtime/cuda/include" -c "$src" -o "$obj" >"$log" 2>&1 ||
		{ grep -q 'requires separate compilation mode\|Unresolved extern function' "$log" &&
			"$NVCC" $NVCCFLAGS -rdc=true "${flags[@]}" -I"$ROOT/runtime/cuda/include" -c "$src" -o "$obj" >"$log" 2>&1; }
}

# Every arch of a case in one nvcc run (-gencode per arch): preprocessing of
# the host side, the front end and the host compile happen once instead of
# once per arch; each arch still gets its own device front end and ptxas.
# ptxas names the arch of every kernel ("Compiling entry function 'K' for
# 'sm_80'"), so ptxas_usage.sh splits the rows per arch, giving the rows a
# run per arch gives. When the run fails, the case is compiled again once
# per arch so that each arch passes or fails on its own, with its own log.
compile_case() { # NAME
	local name=$1 arch target=()
	set -- $ARCHS
	if [ $# -eq 1 ]; then
		compile_one "$name" "$1"
		return
	fi
	local log="$OUT/$name.log"
	for arch in $ARCHS; do
		if [ "$FULL" = 1 ]; then
			target+=(-gencode "arch=compute_${arch#sm_},code=$arch")
		else
			target+=(-gencode "arch=compute_${arch#sm_},code=compute_${arch#sm_}")
		fi
	done
	[ "$FULL" = 1 ] && target+=(-Xptxas -v)
	if nvcc_rdc "$log" "$OUT/$name.o" "${target[@]}" "$OUT/src/$name.cu"; then
		if [ "$FULL" = 1 ]; then
			"$ROOT/bench/difftest/ptxas_usage.sh" "$name" <"$log" >"$OUT/usage/$name.all"
			for arch in $ARCHS; do
				awk -F '\t' -v a="$arch" '$2 == a' "$OUT/usage/$name.all" >"$OUT/usage/$name.$arch.tsv"
			done
			rm -f "$OUT/usage/$name.all"
		fi
		for arch in $ARCHS; do echo "ok   $name $arch"; done
		rm -f "$log" "$OUT/$name.o"
	else
		rm -f "$log" "$OUT/$name.o"
		for arch in $ARCHS; do compile_one "$name" "$arch"; done
	fi
}
export -f compile_one compile_case nvcc_rdc
export NVCC NVCCFLAGS OUT ROOT FULL ARCHS

jobs=()
for f in "$OUT"/src/${CASES:-*}.cu; do
	[ -f "$f" ] || continue
	jobs+=("$(basename "$f" .cu)")
done
results=$(printf '%s\n' "${jobs[@]}" | xargs -P "$JOBS" -L 1 bash -c 'compile_case $0')
echo "$results" | sort
passed=$(grep -c '^ok ' <<<"$results" || true)
failed=$(grep -c '^FAIL ' <<<"$results" || true)
echo "$passed passed, $failed failed"
if [ "$FULL" = 1 ]; then
	table=${REGISTERS:-$OUT/registers.txt}
	{
		printf 'case\tarch\tregisters\tspill_stores\tspill_loads\tstack\tkernel\n'
		{ cat "$OUT"/usage/*.tsv 2>/dev/null || true; } | sort -t $'\t' -k1,1 -k2,2 -k7,7
	} >"$table"
	echo "registers and spills per kernel: $table ($(($(wc -l <"$table") - 1)) kernels)"
fi
[ "$failed" -eq 0 ]
