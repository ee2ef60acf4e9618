#!/usr/bin/env bash
# The bam::array access path against plain kernels, on one GPU, one run
# (issue 18: hit path, placement, forward progress). Builds libbam for
# sm_90 (ARCH=sm_80 for an A100) and bench/hitpath/hitpath.cu, runs it, and
# writes the JSON to $OUT/hitpath.json (or ./hitpath.json) and stdout.
#
#   bench/hitpath/run.sh            # ~1 min build + < 1 min run on an H100
#   QUICK=1 bench/hitpath/run.sh    # smaller arrays
#   GPU_TESTS=1 bench/hitpath/run.sh  # also the runtime's GPU tests (miss
#                                   # path, eviction), log in $OUT/gpu_tests.log
#
# Also writes $OUT/hitpath-registers.txt: ptxas registers/spills of every
# benchmark kernel of both builds (this nvcc, no -maxrregcount).
#
# Exit status 1 when any checksum or the 16-line-cache runs disagree with
# the plain kernels / the CPU, or a GPU test fails.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ARCH=${ARCH:-sm_90}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
BUILD=${BUILD:-$ROOT/runtime/cuda/build/hitpath-$ARCH}
DEST=${OUT:-$PWD}
mkdir -p "$BUILD" "$DEST"
JOBS=$(nproc 2>/dev/null || echo 4)

echo "hitpath: building libbam ($ARCH) in $BUILD" >&2
make -s -C "$ROOT/runtime/cuda" -j"$JOBS" ARCH="$ARCH" BUILD="$BUILD" lib >&2
# Two builds of the same benchmark: the hit path's default ordering (an
# acquire fence between the element load and the fill-number check) and
# the opt-in BAM_HIT_ORDER_BY_DEPENDENCY (an address dependency instead).
build() { # NAME EXTRA_FLAGS...
	local name=$1
	shift
	"$NVCC" -std=c++17 -O3 -arch="$ARCH" -Xptxas -v "$@" -I"$ROOT/runtime/cuda/include" \
		"$ROOT/bench/hitpath/hitpath.cu" "$BUILD/libbam.a" -o "$BUILD/hitpath-$name" -lcudart -lpthread \
		2> "$DEST/hitpath-$name.ptxas.txt" || { cat "$DEST/hitpath-$name.ptxas.txt" >&2; return 2; }
}
build fence &
pid_fence=$!
build dependency -DBAM_HIT_ORDER_BY_DEPENDENCY &
pid_dep=$!
wait $pid_fence
wait $pid_dep
for v in fence dependency; do
	awk -v b=$v -F"'" '/Compiling entry function/ { fn = $2; next }
		fn && /bytes stack frame/ { st = $0; next }
		fn && /Used [0-9]+ registers/ { sub(/.*Used /, ""); split($0, w, " ");
			printf "%s\t%s\t%s\t%s\n", b, fn, w[1], st; fn = "" }' "$DEST/hitpath-$v.ptxas.txt"
done | grep -v EmptyKernel | sed -E 's/ +/ /g' > "$DEST/hitpath-registers.txt" || true
echo "hitpath: registers per kernel (build, kernel, registers, frame/spills):" >&2
cat "$DEST/hitpath-registers.txt" >&2

QUICK_ARG=()
[ "${QUICK:-0}" = 1 ] && QUICK_ARG=(--quick)
status=0
for v in fence dependency; do
	echo "hitpath: running $v" >&2
	timeout 240 "$BUILD/hitpath-$v" "${QUICK_ARG[@]}" > "$DEST/hitpath-$v.json" 2> "$DEST/hitpath-$v.log" || status=$?
	cat "$DEST/hitpath-$v.log" >&2
done
{
	for v in fence dependency; do
		[ $v = fence ] && printf '{"fence": ' || printf ', "dependency": '
		if [ -s "$DEST/hitpath-$v.json" ]; then cat "$DEST/hitpath-$v.json"; else printf '{"failed": 1}'; fi
	done
	printf '}\n'
} | tr -d '\n' > "$DEST/hitpath.json"
echo >> "$DEST/hitpath.json"
cat "$DEST/hitpath.json"
echo "hitpath: wrote $DEST/hitpath.json (exit $status)" >&2

if [ "${GPU_TESTS:-0}" = 1 ]; then
	echo "hitpath: runtime GPU tests ($ARCH)" >&2
	if make -s -C "$ROOT/runtime/cuda" -j"$JOBS" ARCH="$ARCH" BUILD="$BUILD" "$BUILD/bam_gpu_tests" >&2 &&
		timeout 300 "$BUILD/bam_gpu_tests" > "$DEST/gpu_tests.log" 2>&1; then
		tail -3 "$DEST/gpu_tests.log" >&2
	else
		tail -30 "$DEST/gpu_tests.log" >&2 || true
		echo "hitpath: GPU tests FAILED" >&2
		status=1
	fi
fi
exit $status
