#!/usr/bin/env bash
# Forward progress with a tiny cache (issue 18): the difftest of every
# corpus program with a cache of LINES lines of 4 KiB (default 16),
# placement off, once per backend (hbm, host, emu) and flag set (--auto,
# --auto --opt auto), all six in parallel. A row passes when the port's
# checksum equals the original's; a run the runtime cannot continue is
# stopped by its stall check (exit 1, "a kernel was stopped by the cache"),
# a slow one by TIMEOUT. Rows are printed as they end ("difftest: row").
#
# Inputs: bench/difftest/tiny/PROG.args where present (ARGS_DIR), else the
# difftest's own. A 16-line cache misses on nearly every data-dependent
# read, so the programs whose defaults take minutes that way (pagerank: 14 M
# random reads) run on inputs a third to a tenth the size, still ten times
# the cache or more. ARGS_DIR= (empty) keeps the defaults.
#
#   OUT=/tmp/tiny BAMGEN=bin/bamgen ARCH=sm_90 bench/difftest/tiny_cache.sh [PROGRAMS...]
#   LINES=32 TIMEOUT=120 BACKENDS="emu" FLAGS="opt" bench/difftest/tiny_cache.sh bfs_thread cc
#
# Needs a GPU and nvcc. Writes $OUT/tiny-FLAGS-BACKEND.txt per difftest and
# exits 1 if any row failed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/build/tiny-cache}
LINES=${LINES:-16}
TIMEOUT=${TIMEOUT:-120}
ARGS_DIR=${ARGS_DIR-$ROOT/bench/difftest/tiny}
BACKENDS=${BACKENDS:-"hbm host emu"}
FLAGS=${FLAGS:-"auto opt"}
mkdir -p "$OUT"
case $LINES in '' | *[!0-9]*) echo "tiny_cache: LINES=$LINES is not a number of lines" >&2; exit 2 ;; esac
rm -f "$OUT"/tiny-*.txt
# The runtime once, before the parallel difftests each check it.
make -C "$ROOT/runtime/cuda" ARCH="${ARCH:-sm_80}" -j"$(nproc)" lib >"$OUT/runtime-build.log" 2>&1 ||
	{ echo "tiny_cache: make -C runtime/cuda lib failed; see $OUT/runtime-build.log" >&2; exit 2; }
for v in $FLAGS; do
	case $v in auto) extra="" ;; opt) extra="--opt auto" ;; *) echo "tiny_cache: FLAGS takes auto and opt, not $v" >&2; exit 2 ;; esac
	# One build per flag set, then one difftest per backend on it, in parallel.
	(
		OUT="$OUT/build-$v" PORT_EXTRA="$extra" BUILD_ONLY=1 JOBS=${JOBS:-8} "$ROOT/bench/difftest/run.sh" "$@" \
			>"$OUT/build-$v.txt" 2>&1 || { echo "the build for $v failed: $OUT/build-$v.txt"; echo rc=1; } >"$OUT/tiny-$v-build.txt"
		[ -f "$OUT/tiny-$v-build.txt" ] && exit 1
		for b in $BACKENDS; do
			(BAM_CACHE_BYTES=$((LINES * 4))K BAM_LINE_BYTES=4096 TIMEOUT=$TIMEOUT BACKENDS=$b ARGS_DIR="$ARGS_DIR" \
				BUILD_FROM="$OUT/build-$v" OUT="$OUT/work-$v-$b" PORT_EXTRA="$extra" "$ROOT/bench/difftest/run.sh" "$@" \
				>"$OUT/tiny-$v-$b.txt" 2>&1
			echo "rc=$?" >>"$OUT/tiny-$v-$b.txt") &
		done
		wait
	) &
done
wait
failed=0
for f in "$OUT"/tiny-*.txt; do
	grep -h '^difftest: row' "$f" | sed "s|^difftest: row|$(basename "$f" .txt):|"
	grep -q '^rc=0$' "$f" || failed=1
done
exit $failed
