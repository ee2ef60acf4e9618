#!/usr/bin/env bash
# The bam::array access path against plain kernels, on one GPU, one run
# (issue 18: hit path, placement, forward progress). Builds libbam for
# sm_90 (ARCH=sm_80 for an A100) and bench/hitpath/hitpath.cu, runs it, and
# writes the JSON to $OUT/hitpath.json (or ./hitpath.json) and stdout.
#
#   bench/hitpath/run.sh            # ~1 min build + < 1 min run on an H100
#   QUICK=1 bench/hitpath/run.sh    # smaller arrays
#
# Exit status 1 when any checksum or the 16-line-cache runs disagree with
# the plain kernels / the CPU.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ARCH=${ARCH:-sm_90}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
BUILD=${BUILD:-$ROOT/runtime/cuda/build-hitpath-$ARCH}
DEST=${OUT:-$PWD}
mkdir -p "$BUILD" "$DEST"
JOBS=$(nproc 2>/dev/null || echo 4)

echo "hitpath: building libbam ($ARCH) in $BUILD" >&2
make -s -C "$ROOT/runtime/cuda" -j"$JOBS" ARCH="$ARCH" BUILD="$BUILD" lib >&2
"$NVCC" -std=c++17 -O3 -arch="$ARCH" -Xptxas -v -I"$ROOT/runtime/cuda/include" \
	"$ROOT/bench/hitpath/hitpath.cu" "$BUILD/libbam.a" -o "$BUILD/hitpath" -lcudart -lpthread \
	2> "$DEST/hitpath.ptxas.txt" || { cat "$DEST/hitpath.ptxas.txt" >&2; exit 2; }
grep -E "Compiling entry|Used [0-9]+ registers|spill" "$DEST/hitpath.ptxas.txt" | paste - - - | \
	sed -E 's/ptxas info *: //g' >&2 || true

QUICK_ARG=()
[ "${QUICK:-0}" = 1 ] && QUICK_ARG=(--quick)
status=0
timeout 300 "$BUILD/hitpath" "${QUICK_ARG[@]}" > "$DEST/hitpath.json" 2> "$DEST/hitpath.log" || status=$?
cat "$DEST/hitpath.log" >&2
cat "$DEST/hitpath.json"
echo "hitpath: wrote $DEST/hitpath.json (exit $status)" >&2
exit $status
