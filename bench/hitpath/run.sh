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
#   VARIANTS="acquire dependency" bench/hitpath/run.sh   # a subset of builds
#   BUILD_ONLY=1 / SKIP_BUILD=1     # only build / run what an earlier call built
#   OLD_INC=/path/to/other/runtime/cuda/include bench/hitpath/run.sh
#                                   # adds build "old": the same benchmark
#                                   # against other runtime headers (e.g.
#                                   # main's, to compare a change in one run)
#
# Builds of the hit path (the JSON has one object per build):
#   default        the shipped hit path: map entry and element as acquire
#                  loads (the PTX model's ordering); hit counters: one
#                  reduction per warp access
#   default_dependency  -DBAM_HIT_ORDER_BY_DEPENDENCY: ordered by address
#                  dependency (no acquire), map entry weak (L1), element
#                  and fill number from L2; relies on hardware behaviour
#   acquire        the default before session 12 (-DBAM_HIT_STATS_PER_FIELD):
#                  the same ordering with three counter reductions
#   dependency     the opt-in before (-DBAM_HIT_ORDER_BY_DEPENDENCY
#                  -DBAM_HIT_ENTRY_L2 -DBAM_HIT_STATS_PER_FIELD)
#   fence          -DBAM_HIT_ORDER_BY_FENCE: plain element load + acquire fence
#                  (the hit path before the acquire loads)
#
# Also writes $OUT/hitpath-registers.txt: ptxas registers/spills of every
# benchmark kernel of every build (this nvcc, no -maxrregcount).
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

# The builds (also for SKIP_BUILD=1 runs: check.sh builds, then runs them;
# before, its runs left out the `old` build).
VARIANTS=${VARIANTS:-"acquire dependency default default_dependency"}
[ -n "${OLD_INC:-}" ] && VARIANTS="old $VARIANTS"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
echo "hitpath: building libbam ($ARCH) in $BUILD" >&2
make -s -C "$ROOT/runtime/cuda" -j"$JOBS" ARCH="$ARCH" BUILD="$BUILD" lib >&2
flags_of() {
	case $1 in
	default) echo "-I$ROOT/runtime/cuda/include" ;;
	default_dependency) echo "-DBAM_HIT_ORDER_BY_DEPENDENCY -I$ROOT/runtime/cuda/include" ;;
	acquire) echo "-DBAM_HIT_STATS_PER_FIELD -I$ROOT/runtime/cuda/include" ;;
	dependency) echo "-DBAM_HIT_ORDER_BY_DEPENDENCY -DBAM_HIT_ENTRY_L2 -DBAM_HIT_STATS_PER_FIELD -I$ROOT/runtime/cuda/include" ;;
	fence) echo "-DBAM_HIT_ORDER_BY_FENCE -I$ROOT/runtime/cuda/include" ;;
	old) echo "-I$OLD_INC" ;;
	*) echo "hitpath: unknown build $1" >&2; return 2 ;;
	esac
}
build() { # NAME
	local name=$1 flags
	flags=$(flags_of "$name") || return 2
	# shellcheck disable=SC2086
	"$NVCC" -std=c++17 -O3 -arch="$ARCH" -Xptxas -v $flags \
		"$ROOT/bench/hitpath/hitpath.cu" "$BUILD/libbam.a" -o "$BUILD/hitpath-$name" -lcudart -lpthread \
		2> "$DEST/hitpath-$name.ptxas.txt" || { cat "$DEST/hitpath-$name.ptxas.txt" >&2; return 2; }
}
pids=()
for v in $VARIANTS; do
	build "$v" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for v in $VARIANTS; do
	awk -v b=$v -F"'" '/Compiling entry function/ { fn = $2; next }
		fn && /bytes stack frame/ { st = $0; next }
		fn && /Used [0-9]+ registers/ { sub(/.*Used /, ""); split($0, w, " ");
			printf "%s\t%s\t%s\t%s\n", b, fn, w[1], st; fn = "" }' "$DEST/hitpath-$v.ptxas.txt"
done | grep -v EmptyKernel | sed -E 's/ +/ /g' > "$DEST/hitpath-registers.txt" || true
echo "hitpath: registers per kernel (build, kernel, registers, frame/spills):" >&2
cat "$DEST/hitpath-registers.txt" >&2
fi
[ "${BUILD_ONLY:-0}" = 1 ] && exit 0

QUICK_ARG=()
[ "${QUICK:-0}" = 1 ] && QUICK_ARG=(--quick)
status=0
for v in $VARIANTS; do
	echo "hitpath: running $v" >&2
	timeout 240 "$BUILD/hitpath-$v" "${QUICK_ARG[@]}" > "$DEST/hitpath-$v.json" 2> "$DEST/hitpath-$v.log" || status=$?
	cat "$DEST/hitpath-$v.log" >&2
done
{
	sep='{'
	for v in $VARIANTS; do
		printf '%s"%s": ' "$sep" "$v"
		sep=', '
		if [ -s "$DEST/hitpath-$v.json" ]; then cat "$DEST/hitpath-$v.json"; else printf '{"failed": 1}'; fi
	done
	printf '}\n'
} | tr -d '\n' > "$DEST/hitpath.json"
echo >> "$DEST/hitpath.json"
cat "$DEST/hitpath.json"
echo "hitpath: wrote $DEST/hitpath.json (exit $status)" >&2
# The issue's ratios per build, one line each (python3 where there is one).
command -v python3 > /dev/null && python3 - "$DEST/hitpath.json" >&2 <<'PY' || true
import json, sys
d = json.load(open(sys.argv[1]))
keys = ["ratio_hit_linear_vs_plain_read", "ratio_hit_linear_nostats_vs_plain_read",
        "ratio_hit_linear_lb_vs_plain_read", "ratio_hit_linear_lb_nostats_vs_plain_read",
        "ratio_hit_random_vs_plain_gather", "ratio_hit_random_nostats_vs_plain_gather",
        "ratio_hit_random_lb_vs_plain_gather", "ratio_hit_linear_lb40_vs_plain_read",
        "ratio_hit_linear_lb40_nostats_vs_plain_read", "ratio_hit_random_lb40_vs_plain_gather",
        "regs_bam_read", "regs_bam_read_lb", "regs_bam_read_lb40", "failures"]
print("hitpath summary (build: " + ", ".join(k.replace("ratio_", "").replace("_vs_plain_read", "").replace("_vs_plain_gather", "") for k in keys) + ")")
for b, r in d.items():
    print("  %-17s %s" % (b, " ".join("%.3f" % r[k] if isinstance(r.get(k), (int, float)) else "-" for k in keys)))
PY

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
