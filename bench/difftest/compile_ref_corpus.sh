#!/usr/bin/env bash
# Port corpus programs with `bamgen port --auto --ref` (and with --opt auto
# added) straight from testdata/kernels and compile each result with nvcc:
# the bam::array_ref code bamgen writes builds against runtime/cuda/include.
# The corpus_ref_* goldens pin the outputs on copies; this follows the corpus
# itself. No GPU needed.
#
#   bench/difftest/compile_ref_corpus.sh
#   PROGS="spmv sssp" ARCH=sm_90 bench/difftest/compile_ref_corpus.sh
#
# Prints one line per program and flag set, then "N passed, N failed"; exits
# 1 on any failure (logs kept in $OUT).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ARCH=${ARCH:-sm_80}
PROGS=${PROGS:-"bfs_thread spmv sssp pagerank"}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bamgen-refcorpus.XXXXXX")}

if ! [ -x "$NVCC" ] && ! command -v "$NVCC" >/dev/null; then
	echo "compile_ref_corpus: nvcc not found (set NVCC=/path/to/nvcc)" >&2
	exit 2
fi
(cd "$ROOT" && go build -o "$OUT/bamgen" ./cmd/bamgen)

compile_one() { # PROG VARIANT FLAGS...
	local prog=$1 variant=$2
	shift 2
	local src="$OUT/${prog}_$variant.cu" log="$OUT/${prog}_$variant.log"
	if ! (cd "$ROOT" && "$OUT/bamgen" port -q "$@" "testdata/kernels/$prog/$prog.cu") >"$src" 2>"$log"; then
		echo "FAIL $prog $variant (bamgen port; log: $log)"
		return
	fi
	if ! grep -q 'bam::array_ref' "$src"; then
		echo "FAIL $prog $variant (no bam::array_ref in the output)"
		return
	fi
	if "$NVCC" -std=c++17 -arch="$ARCH" -I"$ROOT/runtime/cuda/include" -c "$src" -o "$OUT/${prog}_$variant.o" >>"$log" 2>&1; then
		echo "ok   $prog $variant"
		rm -f "$log" "$OUT/${prog}_$variant.o"
	else
		echo "FAIL $prog $variant (log: $log)"
		head -20 "$log" | sed 's/^/     /'
	fi
}

results=$(
	for prog in $PROGS; do
		compile_one "$prog" ref --auto --ref &
		compile_one "$prog" ref_opt --auto --ref --opt auto &
	done
	wait
)
echo "$results" | sort
passed=$(grep -c '^ok ' <<<"$results" || true)
failed=$(grep -c '^FAIL ' <<<"$results" || true)
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
