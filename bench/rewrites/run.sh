#!/usr/bin/env bash
# The rewrite benchmark and differential check, on a machine with a GPU.
# Expects build/bench/src from bench/rewrites/prepare.sh (run where bamgen
# is built). For every program: the original with its data in HBM, the
# naive port and each rewrite, on the `host` backend and on `emu` configured
# as an SSD (BAM_EMU_LATENCY_US, BAM_EMU_IOPS), with caches smaller than the
# data; every run's checksum must equal the original's.
#
#   bench/rewrites/run.sh OUTDIR [quick]
#   VARIANTS_FILE=FILE bench/rewrites/run.sh OUTDIR   # rows of a subset of variants.txt (prepare.sh reads it too)
#
# Writes OUTDIR/results.csv (one row per run), OUTDIR/runs.log, and prints
# "N passed, N failed" for the checksum comparisons.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: run.sh OUTDIR [quick]}
quick=${2:-}
mkdir -p "$out"
ARCH=${ARCH:-sm_90}
NVCC=${NVCC:-nvcc}
LAT=${BAM_EMU_LATENCY_US:-10}
IOPS=${BAM_EMU_IOPS:-1000000}
EMU_THREADS=${BAM_EMU_THREADS:-8}
bin=build/bench/bin
mkdir -p "$bin"

# --- build: the runtime library, then every variant in parallel ----------
make -s -C runtime/cuda lib ARCH="$ARCH" >"$out/build.log" 2>&1 || { echo "runtime build failed"; tail -30 "$out/build.log"; exit 2; }
ls build/bench/src/*.cu | xargs -P "$(nproc)" -I{} sh -c '
  f={}; b=$(basename "$f" .cu)
  '"$NVCC"' -O3 -std=c++17 -arch='"$ARCH"' -w -I runtime/cuda/include -I testdata/kernels "$f" \
     -L runtime/cuda/build -lbam -lcuda -lpthread -o '"$bin"'/$b >'"$out"'/build_$b.log 2>&1 || echo "build failed: $b"'
"$NVCC" -O3 -std=c++17 -arch="$ARCH" -I runtime/cuda/include bench/rewrites/drivers_check.cu -o "$bin/drivers_check" >>"$out/build.log" 2>&1

# --- sizes: data several times larger than the caches below ---------------
declare -A ARGS=(
	[bfs_warp]="4194304 7 -d 16 --no-verify"
	[cc]="2097152 7 16 --no-verify"
	[query]="67108864 7 --no-verify"
	[vectoradd]="67108864 7 --no-verify"
	[reduction]="67108864 7 --no-verify"
)
# Which "<number> ms" of a program's stderr is the kernel time of interest.
declare -A TIMEPAT=(
	[bfs_warp]='time ([0-9.]+) ms' [cc]='sweeps=([0-9.]+) ms' [query]='q2 ([0-9.]+) ms'
	[vectoradd]='vector_add ([0-9.]+) ms' [reduction]='time=([0-9.]+) ms'
)
if [ -n "$quick" ]; then
	ARGS=([bfs_warp]="100003 7" [cc]="50021 7 8" [query]="1000003 7" [vectoradd]="1000003 7" [reduction]="1000003 7")
fi
CACHE_BIG=${CACHE_BIG:-64M}                   # the data is 256 MB and up
CACHE_SMALL=${CACHE_SMALL:-33M}               # ~ SMs x resident warps x 4 KiB lines on an H100/H200

# kernel_iops: line fills (cache misses) per second of the measured time,
# the number to compare with BAM_EMU_IOPS (the stats line's own IOPS is
# over the whole process, setup included).
echo "program,variant,backend,cache,ms,checksum,ok,misses,kernel_iops,busy_iops,stats" >"$out/results.csv"
passed=0 failed=0
declare -A REF

run_one() { # prog variant backend cache
	local prog=$1 variant=$2 backend=$3 cache=$4 exe=$bin/${1}__${2}
	[ -x "$exe" ] || { echo "$prog,$variant,$backend,$cache,,,missing,,," >>"$out/results.csv"; failed=$((failed + 1)); return; }
	local log=$out/run_${prog}_${variant}_${backend}_${cache}.log
	local trace=$out/traces/${prog}_${variant}_${cache}.csv
	mkdir -p "$out/traces"
	[ "$backend" = emu ] || trace=
	# shellcheck disable=SC2086
	# BAM_GPU_BUDGET=0, BAM_HOST_PLACEMENT=cache: the rewrites are measured
	# through the cache (the host backend's defaults would copy arrays that
	# fit into GPU memory, or read large ones zero-copy, where a ported
	# kernel runs its direct clone instead of the rewrite).
	env BAM_BACKEND="$backend" BAM_GPU_BUDGET="${BAM_GPU_BUDGET:-0}" BAM_HOST_PLACEMENT="${BAM_HOST_PLACEMENT:-cache}" BAM_CACHE_BYTES="$cache" BAM_STATS=1 BAM_EMU_LATENCY_US="$LAT" BAM_EMU_IOPS="$IOPS" \
		BAM_EMU_THREADS="$EMU_THREADS" BAM_EMU_DIR=/tmp BAM_EMU_TRACE="$trace" \
		timeout "${RUN_TIMEOUT:-120}" "$exe" ${ARGS[$prog]} >"$log.out" 2>"$log"
	local rc=$?
	local sum ms stats ok misses iops
	sum=$(sed -n 's/^checksum: //p' "$log.out" | head -1)
	# The number right before " ms" (a pattern like "q2 (...) ms" has digits in its label too).
	ms=$(grep -oE "${TIMEPAT[$prog]}" "$log" | head -1 | grep -oE '[0-9.]+ ms' | grep -oE '^[0-9.]+')
	stats=$(grep -iE 'hit|iops' "$log" | tr '\n,' ' ;' | cut -c1-300)
	misses=$(grep -oE '[0-9]+ misses' "$log" | head -1 | grep -oE '^[0-9]+')
	iops=
	if [ -n "$misses" ] && [ -n "$ms" ]; then iops=$(awk -v m="$misses" -v t="$ms" 'BEGIN { if (t > 0) printf "%.0f", m * 1000 / t }'); fi
	# busy_iops: completions per second between the first and the last
	# completion the emu controller saw (the storage's own view; setup
	# writes go around the queues, so this is the kernels' I/O).
	local busy=
	if [ -n "$trace" ] && [ -s "$trace" ]; then
		busy=$(awk -F, 'NR > 1 && $3 > 0 { if (first == "") first = $1; last = $1; n += $3 }
			END { if (n > 0 && last > first) printf "%.0f", n / ((last - first + 0.1) / 1000) }' "$trace")
	fi
	if [ "$variant" = hbm ]; then REF[$prog]=$sum; fi
	ok=no
	if [ $rc -eq 0 ] && [ -n "$sum" ] && [ "$sum" = "${REF[$prog]:-}" ]; then ok=yes; passed=$((passed + 1)); else failed=$((failed + 1)); fi
	echo "$prog,$variant,$backend,$cache,$ms,$sum,$ok,$misses,$iops,$busy,$stats" >>"$out/results.csv"
	printf '%-10s %-10s %-5s %-5s %10s ms %9s IOPS %9s busy  %s  rc=%d\n' "$prog" "$variant" "$backend" "$cache" "${ms:-?}" "${iops:-?}" "${busy:--}" "$ok" "$rc"
}

"$bin/drivers_check" >"$out/drivers_check.log" 2>&1 && echo "drivers_check: $(tail -1 "$out/drivers_check.log")" \
	|| { echo "drivers_check FAILED"; cat "$out/drivers_check.log"; failed=$((failed + 1)); }

while read -r prog variant _; do
	case "$prog" in ''|'#'*) continue ;; esac
	if [ "$variant" = hbm ]; then
		run_one "$prog" hbm hbm none
		continue
	fi
	for backend in host emu; do run_one "$prog" "$variant" "$backend" "$CACHE_BIG"; done
done < "${VARIANTS_FILE:-bench/rewrites/variants.txt}"

# ODT's claim: performance flat when the cache shrinks to SMs x warps x line.
for prog in bfs_warp cc; do
	for variant in naive transpose odt; do
		# only variants of this run (VARIANTS_FILE); a failed build already failed above
		grep -qE "^$prog +$variant " "${VARIANTS_FILE:-bench/rewrites/variants.txt}" || continue
		run_one "$prog" "$variant" emu "$CACHE_SMALL"
	done
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
