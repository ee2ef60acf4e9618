#!/usr/bin/env bash
# Where ODT's emu time goes: the CC and BFS ODT variants under several emu
# settings (controller threads, queue shape, statistics off, storage free),
# or, with `items`, under several work-item sizes (BAM_ODT_ITEM_VERTICES,
# 0 = whole tiles) at both benchmark cache sizes, REPS times each.
# Run on the GPU machine after bench/rewrites/prepare.sh (here):
#
#   bench/rewrites/odt_settings.sh
#   REPS=2 ITEMS="0 128" bench/rewrites/odt_settings.sh items
#
# Prints one line per run: the kernel time and the line fills (misses).
set -uo pipefail
cd "$(dirname "$0")/../.."
ARCH=${ARCH:-sm_90}
NVCC=${NVCC:-nvcc}
bin=build/bench/bin
mkdir -p "$bin"
make -s -C runtime/cuda lib ARCH="$ARCH" >/dev/null || { echo "runtime build failed"; exit 2; }
for v in cc__odt bfs_warp__odt; do
	"$NVCC" -O3 -std=c++17 -arch="$ARCH" -w -I runtime/cuda/include -I testdata/kernels "build/bench/src/$v.cu" \
		-L runtime/cuda/build -lbam -lcuda -lpthread -o "$bin/$v" &
done
wait
log=$(mktemp)
run() { # label env...
	local label=$1 prog=$2 args=$3
	shift 3
	env BAM_EMU_DIR=/tmp BAM_BACKEND=emu BAM_CACHE_BYTES=${CACHE:-64M} "$@" "$bin/$prog" $args >/dev/null 2>"$log"
	printf '%-52s rc=%d %-18s %s\n' "$label" $? "$(grep -oE '(sweeps=[0-9.]+ ms|time [0-9.]+ ms)' "$log" | head -1)" \
		"$(grep -oE '[0-9]+ misses' "$log" | head -1)"
}
SSD="BAM_EMU_LATENCY_US=10 BAM_EMU_IOPS=1000000"
if [ "${1:-}" = items ]; then
	for CACHE in 64M 33M; do
		for iv in ${ITEMS:-0 64 128 256 512}; do
			for _ in $(seq "${REPS:-1}"); do
				# shellcheck disable=SC2086
				run "cc  $CACHE items=$iv" cc__odt "2097152 7 16 --no-verify" $SSD BAM_EMU_THREADS=8 BAM_ODT_ITEM_VERTICES=$iv
				# shellcheck disable=SC2086
				run "bfs $CACHE items=$iv" bfs_warp__odt "4194304 7 -d 16 --no-verify" $SSD BAM_EMU_THREADS=8 BAM_ODT_ITEM_VERTICES=$iv
			done
		done
	done
	rm -f "$log"
	exit 0
fi
for cfg in "BAM_EMU_THREADS=8 BAM_STATS=1" "BAM_EMU_THREADS=8 BAM_STATS=0" "BAM_EMU_THREADS=4 BAM_STATS=1" \
	"BAM_EMU_THREADS=12 BAM_STATS=1" "BAM_EMU_THREADS=8 BAM_QUEUES=128 BAM_QUEUE_DEPTH=256 BAM_STATS=1" \
	"BAM_EMU_THREADS=8 BAM_EMU_LATENCY_US=0 BAM_EMU_IOPS=0 BAM_STATS=1"; do
	# shellcheck disable=SC2086 # the settings are words
	run "cc  $cfg" cc__odt "2097152 7 16 --no-verify" $SSD $cfg
	# shellcheck disable=SC2086
	run "bfs $cfg" bfs_warp__odt "4194304 7 -d 16 --no-verify" $SSD $cfg
done
rm -f "$log"
