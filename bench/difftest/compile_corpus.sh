#!/usr/bin/env bash
# Port corpus programs straight from testdata/kernels and compile each
# result with nvcc through ptxas: what bamgen writes for the corpus builds
# against runtime/cuda/include, and its registers are measured. Two sets:
#
#   REF_PROGS (bfs_thread spmv sssp pagerank): `--auto --ref` and
#     `--auto --ref --opt auto` (the bam::array_ref code; the corpus_ref_*
#     goldens pin the outputs on copies, this follows the corpus itself);
#   OPT_PROGS (every single-file corpus program): `--auto --opt auto`, the
#     ports the benchmark matrix and the difftest run (the port goldens
#     cover `--auto`; the opt goldens cover the rewrites on small cases, not
#     on these programs).
#
# No GPU needed.
#
#   bench/difftest/compile_corpus.sh
#   REF_PROGS="spmv sssp" OPT_PROGS=cc ARCHS=sm_90 bench/difftest/compile_corpus.sh
#   REGISTERS=build/registers-corpus.txt bench/difftest/compile_corpus.sh
#
# Each result goes through ptxas to machine code for every arch in ARCHS
# (sm_80 and sm_90), with `-Xptxas -v`: registers, spills and stack per
# kernel go to $REGISTERS (default $OUT/registers.txt; the columns of
# compile_golden.sh). Prints one line per program, flag set and arch, then
# "N passed, N failed"; exits 1 on any failure (logs kept in $OUT).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ARCHS=${ARCHS:-${ARCH:-"sm_80 sm_90"}}
REGISTERS=${REGISTERS:-}
REF_PROGS=${REF_PROGS-"bfs_thread spmv sssp pagerank"}
# Single-file programs: testdata/kernels/P/P.cu (multi-file ones are the
# program goldens' business, compiled to PTX by compile_program_golden.sh).
default_opt_progs() {
	local d p
	for d in "$ROOT"/testdata/kernels/*/; do
		p=$(basename "$d")
		[ -f "$d/$p.cu" ] && printf '%s ' "$p"
	done
}
OPT_PROGS=${OPT_PROGS-$(default_opt_progs)}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bamgen-corpus.XXXXXX")}

if ! [ -x "$NVCC" ] && ! command -v "$NVCC" >/dev/null; then
	echo "compile_corpus: nvcc not found (set NVCC=/path/to/nvcc)" >&2
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
	# A --ref port must use bam::array_ref, except where odt tiles the
	# loop (ref_opt): odt reads that walk through its tile view and the
	# port says so with a PORT057 note (-q hides notes, so ask again).
	if [[ $variant == ref* ]] && ! grep -q 'bam::array_ref' "$src"; then
		# (Captured whole, not piped to grep -q: under pipefail, grep's
		# early exit fails the pipeline when bamgen is still writing.)
		local notes
		notes=$(cd "$ROOT" && "$OUT/bamgen" port "$@" "testdata/kernels/$prog/$prog.cu" 2>&1 >/dev/null || true)
		if ! [[ $variant == ref_opt ]] || ! grep -q 'PORT057' <<<"$notes"; then
			echo "FAIL $prog $variant (no bam::array_ref in the output, and no PORT057 note saying odt tiles its loops)"
			return
		fi
	fi
	# Every arch in one nvcc run (-gencode per arch; see compile_golden.sh):
	# the rows split per arch by ptxas_usage.sh are those of a run per arch.
	# When it fails, each arch is compiled alone, to pass or fail with its
	# own log.
	local arch target=() archs=$ARCHS
	for arch in $ARCHS; do target+=(-gencode "arch=compute_${arch#sm_},code=$arch"); done
	if [ "$(wc -w <<<"$ARCHS")" -gt 1 ] &&
		"$NVCC" -std=c++17 "${target[@]}" -Xptxas -v -I"$ROOT/runtime/cuda/include" -I"$ROOT/testdata/kernels/$prog" \
			-c "$src" -o "$OUT/${prog}_$variant.o" >"$log.all" 2>&1; then
		"$ROOT/bench/difftest/ptxas_usage.sh" "${prog}_$variant" <"$log.all" >"$OUT/${prog}_$variant.all"
		for arch in $ARCHS; do
			echo "ok   $prog $variant $arch"
			awk -F '\t' -v a="$arch" '$2 == a' "$OUT/${prog}_$variant.all" >"$OUT/${prog}_$variant.$arch.tsv"
		done
		rm -f "$log.all" "$OUT/${prog}_$variant.all" "$OUT/${prog}_$variant.o"
		archs=
	fi
	rm -f "$log.all"
	for arch in $archs; do
		if "$NVCC" -std=c++17 -gencode "arch=compute_${arch#sm_},code=$arch" -Xptxas -v -I"$ROOT/runtime/cuda/include" -I"$ROOT/testdata/kernels/$prog" \
			-c "$src" -o "$OUT/${prog}_$variant.$arch.o" >"$log.$arch" 2>&1; then
			echo "ok   $prog $variant $arch"
			"$ROOT/bench/difftest/ptxas_usage.sh" "${prog}_$variant" <"$log.$arch" >"$OUT/${prog}_$variant.$arch.tsv"
			rm -f "$log.$arch" "$OUT/${prog}_$variant.$arch.o"
		else
			echo "FAIL $prog $variant $arch (log: $log.$arch)"
			grep -v '^ptxas info\|^    [0-9]* bytes stack frame' "$log.$arch" | head -20 | sed 's/^/     /'
		fi
	done
	rm -f "$log"
}

results=$(
	for prog in $REF_PROGS; do
		compile_one "$prog" ref --auto --ref &
		compile_one "$prog" ref_opt --auto --ref --opt auto &
	done
	wait
	# The opt ports after the ref ones: two at a time at most, so the nvcc
	# processes (each ~1 GiB) do not all start together.
	n=0
	for prog in $OPT_PROGS; do
		compile_one "$prog" opt --auto --opt auto &
		n=$((n + 1))
		[ $((n % 2)) -eq 0 ] && wait
	done
	wait
)
echo "$results" | sort
passed=$(grep -c '^ok ' <<<"$results" || true)
failed=$(grep -c '^FAIL ' <<<"$results" || true)
echo "$passed passed, $failed failed"
table=${REGISTERS:-$OUT/registers.txt}
{
	printf 'case\tarch\tregisters\tspill_stores\tspill_loads\tstack\tkernel\n'
	{ cat "$OUT"/*.tsv 2>/dev/null || true; } | sort -t $'\t' -k1,1 -k2,2 -k7,7
} >"$table"
echo "registers and spills per kernel: $table ($(($(wc -l <"$table") - 1)) kernels)"
[ "$failed" -eq 0 ]
