#!/usr/bin/env bash
# One GPU call for a change to the hit path (issue 18, item 2): the
# hit-path microbenchmark with the hit path shipped before (`acquire`:
# exactly that code, counters included), the opt-in before (`dependency`)
# and the shipped one (`default`, and `default_oldstats` with the old
# counters) in the same run (bench/hitpath/run.sh lists the builds), then
# the runtime's GPU tests (eviction and correctness, including
# hit_path_sizes_eviction) built with the shipped hit path. Aims at < 4
# minutes on one H100/H200.
#
#   bench/hitpath/check.sh            # results in $OUT (default ./out-hit)
#   VARIANTS="fence acquire" OLD_INC=/tree/runtime/cuda/include bench/hitpath/check.sh
#
# Writes $OUT/hitpath.json (one object per build), $OUT/hitpath-registers.txt,
# $OUT/gpu_tests.log. Exit status: 0 when every checksum matched and every
# GPU test passed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ARCH=${ARCH:-sm_90}
OUT=${OUT:-$PWD/out-hit}
export OUT ARCH
mkdir -p "$OUT"
J=$(nproc 2> /dev/null || echo 8)
B=${BUILD:-$ROOT/runtime/cuda/build/hitcheck-$ARCH}
export BUILD=$B
export VARIANTS=${VARIANTS:-"acquire dependency default default_oldstats"}
t0=$(date +%s)
say() { echo "check [$(($(date +%s) - t0)) s] $*" >&2; }

say "libbam ($ARCH)"
make -s -C "$ROOT/runtime/cuda" -j"$J" ARCH="$ARCH" BUILD="$B" lib > "$OUT/build.log" 2>&1 || {
	tail -30 "$OUT/build.log" >&2
	exit 2
}
say "benchmark builds ($VARIANTS) and bam_gpu_tests, in parallel"
make -s -C "$ROOT/runtime/cuda" -j"$J" ARCH="$ARCH" BUILD="$B" "$B/bam_gpu_tests" > "$OUT/gpu_tests_build.log" 2>&1 &
tests_pid=$!
BUILD_ONLY=1 bash "$ROOT/bench/hitpath/run.sh" 2> "$OUT/hitpath-build.log"
bench_build=$?
wait "$tests_pid"
tests_build=$?
[ $bench_build = 0 ] || { tail -30 "$OUT/hitpath-build.log" >&2; }
[ $tests_build = 0 ] || { tail -30 "$OUT/gpu_tests_build.log" >&2; }
grep -E 'k_read|k_gather' "$OUT/hitpath-registers.txt" | sed -E 's/_ZN[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_hitpath_cu_main[0-9]+//' >&2 || true

status=0
if [ $bench_build = 0 ]; then
	say "benchmark"
	SKIP_BUILD=1 bash "$ROOT/bench/hitpath/run.sh" > /dev/null 2> "$OUT/hitpath-run.log" || status=1
	grep -E '^(plain_|hit_|FAIL|hitpath summary|  [a-z_]+ +[-0-9.]+ )' "$OUT/hitpath-run.log" >&2
else
	status=2
fi
if [ $tests_build = 0 ]; then
	say "GPU tests (make test-gpu)"
	if timeout 150 make -s -C "$ROOT/runtime/cuda" ARCH="$ARCH" BUILD="$B" test-gpu > "$OUT/gpu_tests.log" 2>&1; then
		grep -E '^(PASS|FAIL|SKIP) .*hit_path|^bam_gpu_tests' "$OUT/gpu_tests.log" >&2
	else
		grep -E '^(FAIL|SKIP)|^bam_gpu_tests' "$OUT/gpu_tests.log" >&2
		tail -5 "$OUT/gpu_tests.log" >&2
		say "GPU tests FAILED or timed out (150 s)"
		status=1
	fi
else
	status=2
fi
say "done (exit $status); files in $OUT"
exit $status
