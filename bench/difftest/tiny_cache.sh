#!/usr/bin/env bash
# Forward progress with a tiny cache (issue 18): the difftest of every
# corpus program with a cache of LINES lines of 4 KiB (default 16),
# placement off, once per backend (hbm, host, emu) and flag set (--auto,
# --auto --opt auto), all six in parallel. A row passes when the port's
# checksum equals the original's; a run the runtime cannot continue is
# stopped by its stall check (exit 1, "a kernel was stopped by the cache"),
# a slow one by TIMEOUT. Rows are printed as they end ("difftest: row").
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
TIMEOUT=${TIMEOUT:-60}
BACKENDS=${BACKENDS:-"hbm host emu"}
FLAGS=${FLAGS:-"auto opt"}
mkdir -p "$OUT"
case $LINES in '' | *[!0-9]*) echo "tiny_cache: LINES=$LINES is not a number of lines" >&2; exit 2 ;; esac
for v in $FLAGS; do
	case $v in auto) extra="" ;; opt) extra="--opt auto" ;; *) echo "tiny_cache: FLAGS takes auto and opt, not $v" >&2; exit 2 ;; esac
	for b in $BACKENDS; do
		(BAM_CACHE_BYTES=$((LINES * 4))K BAM_LINE_BYTES=4096 TIMEOUT=$TIMEOUT JOBS=${JOBS:-3} BACKENDS=$b \
			OUT="$OUT/work-$v-$b" PORT_EXTRA="$extra" "$ROOT/bench/difftest/run.sh" "$@" >"$OUT/tiny-$v-$b.txt" 2>&1
		echo "rc=$?" >>"$OUT/tiny-$v-$b.txt") &
	done
done
wait
failed=0
for f in "$OUT"/tiny-*.txt; do
	grep -h '^difftest: row' "$f" | sed "s|^difftest: row|$(basename "$f" .txt):|"
	grep -q '^rc=0$' "$f" || failed=1
done
exit $failed
