#!/usr/bin/env bash
# Storage faults on ported corpus programs (issue 18 item 7). Builds every
# program and its port like bench/difftest/run.sh (which it runs first, emu
# backend only, for the fault-free checksums), then runs each port on the
# emu backend three more times:
#
#   transient  BAM_EMU_FAULT=transient (media errors without Do Not Retry,
#              retried by the queue code): the checksum must equal the
#              original's, exit 0.
#   error      BAM_EMU_FAULT=error (Do Not Retry set: permanent): the program
#              must stop with exit status 1 and a message naming the failed
#              line, the array and the NVMe status ("bam: device-side read
#              ... permanent error"), print no `checksum:` line (no result
#              made from zero-filled lines), and never abort
#              ("terminate called", status 134).
#   delay      BAM_EMU_FAULT=delay: same checksum (a control).
#
#   bench/faults/run.sh                       # every corpus program
#   bench/faults/run.sh bfs_warp cc sssp      # some
#   ERROR_RATE=0.001 ARCH=sm_90 bench/faults/run.sh
#   BAMGEN=/path/to/bamgen bench/faults/run.sh   # no Go on the GPU machine
#   SKIP_BUILD=1 ERROR_RATE=0.001 bench/faults/run.sh bfs_warp   # reuse $OUT's builds
#   BAM_CACHE_BYTES=64K ARGS_DIR=bench/difftest/tiny bench/faults/run.sh   # 16 lines, smaller inputs
#
# A run where no injected error hit (small programs at a low rate) is
# reported as "no-fault-hit" (the stats line shows 0 I/O errors), not as a
# pass. Prints a table and "N passed, N failed"; exits 1 on any failure.
set -uo pipefail

case "${1:-}" in -h | --help)
	sed -n '2,/^set /p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
	exit 0
	;;
esac

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/build/faults}
CACHE=${BAM_CACHE_BYTES:-2M}
LINE=${BAM_LINE_BYTES:-4096}
ERROR_RATE=${ERROR_RATE:-0.01}
TRANSIENT_RATE=${TRANSIENT_RATE:-0.01}
TIMEOUT=${TIMEOUT:-300}
CONFIGS=$ROOT/bench/difftest/configs
ARGS_DIR=${ARGS_DIR:-} # PROG.args here first (as bench/difftest/run.sh, which gets it too)
export OUT ARGS_DIR
mkdir -p "$OUT"

if [ "${SKIP_BUILD:-0}" = 1 ]; then
	echo "faults: SKIP_BUILD=1: reusing the builds and fault-free runs in $OUT"
else
	echo "faults: building and checking the fault-free runs (bench/difftest/run.sh, emu)"
	BACKENDS=emu BAM_CACHE_BYTES="$CACHE" BAM_LINE_BYTES="$LINE" "$ROOT/bench/difftest/run.sh" "$@" | tee "$OUT/difftest.txt"
fi

programs=("$@")
if [ ${#programs[@]} -eq 0 ]; then
	for d in "$ROOT"/testdata/kernels/*/; do
		p=$(basename "$d")
		[ -f "$d/$p.cu" ] && programs+=("$p")
	done
fi

checksum_of() { grep -E '^checksum:' "$1" 2>/dev/null | tail -1 | sed 's/^checksum:[[:space:]]*//' || true; }
io_errors_of() { grep -Eo 'I/O: .* ([0-9]+) errors' "$1" 2>/dev/null | tail -1 | grep -Eo '[0-9]+ errors' | cut -d' ' -f1 || true; }

passed=0 failed=0 nohit=0
rows=()
for p in "${programs[@]}"; do
	work=$OUT/$p
	row="$p"
	if [ "$(cat "$work/status" 2>/dev/null)" != ok ] || [ ! -x "$work/port" ]; then
		rows+=("$p | - | - | - | not built or fault-free run failed ($(cat "$work/status" 2>/dev/null || echo missing))")
		failed=$((failed + 1))
		continue
	fi
	# The first run of the program's args file (bfs_modes lists one per
	# memory mode, after comment lines).
	args=() args_file=$CONFIGS/$p.args
	[ -n "$ARGS_DIR" ] && [ -f "$ARGS_DIR/$p.args" ] && args_file=$ARGS_DIR/$p.args
	[ -f "$args_file" ] && read -r -a args <<<"$(grep -v '^[[:space:]]*\(#\|$\)' "$args_file" | head -1)"
	tol=""
	[ -f "$CONFIGS/$p.tol" ] && tol=$(grep -v '^#' "$CONFIGS/$p.tol" | head -1)
	want=$(checksum_of "$work/orig.out")
	result=ok
	# The error run is repeated at 10x the rate (up to 1) while no injected
	# error hits: a program that reads few lines (cc) otherwise shows nothing.
	rates=$ERROR_RATE decided=
	for r in 10 100; do
		rates+=" $(awk -v a="$ERROR_RATE" -v m="$r" 'BEGIN { v = a * m; if (v > 1) v = 1; print v }')"
	done
	for f in transient delay $rates; do
		rate=$TRANSIENT_RATE
		if [[ $f != [a-z]* ]]; then
			rate=$f f=error
			[ -n "$decided" ] && continue
		fi
		log=$work/fault.$f.$rate
		(env BAM_BACKEND=emu BAM_GPU_BUDGET=0 BAM_HOST_PLACEMENT=cache BAM_CACHE_BYTES="$CACHE" BAM_LINE_BYTES="$LINE" \
			BAM_EMU_FAULT="$f" BAM_EMU_FAULT_RATE="$rate" BAM_STATS=1 \
			timeout "$TIMEOUT" "$work/port" "${args[@]}") >"$log.out" 2>"$log.err"
		rc=$?
		got=$(checksum_of "$log.out")
		if [ "$f" != error ]; then
			if [ $rc -ne 0 ]; then
				row+=" | exit $rc"
				result=fail
			elif [ "$want" = "$got" ] || { [ -n "$tol" ] && awk -v a="$want" -v b="$got" -v t="$tol" 'BEGIN { d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a; exit !(d <= t * m) }'; }; then
				row+=" | same"
			else
				row+=" | DIFFERENT ($got)"
				result=fail
			fi
			continue
		fi
		msg=$(grep -m1 '^bam: ' "$log.err" | cut -c1-160)
		if [ $rc -eq 0 ] && [ "$(io_errors_of "$log.err")" = 0 ]; then
			[ "$rate" != "${rates##* }" ] && continue # try the next rate
			row+=" | no fault hit (exit 0)"
			[ "$result" = ok ] && result=no-fault-hit
			decided=1
		elif [ $rc -eq 1 ] && [ -z "$got" ] && ! grep -q 'terminate called' "$log.err" &&
			grep -q 'device-side \(read\|write-back\) of line .* of array .*: .*\(permanent error\|retries\)' "$log.err"; then
			where=$(grep -m1 -o 'found at the synchronization at [^)]*' "$log.err" | sed 's/^found at the synchronization at //')
			row+=" | exit 1, no result$([ "$rate" != "$ERROR_RATE" ] && echo " (rate $rate)"), stopped at ${where:-a runtime call (copy_to_host, ...)}: $(cut -c1-110 <<<"$msg")"
			decided=1
		else
			row+=" | exit $rc, checksum ${got:-none} (rate $rate): ${msg:-no bam message}"
			result=fail
			decided=1
		fi
	done
	rows+=("$row | $result")
	case $result in
	fail) failed=$((failed + 1)) ;;
	no-fault-hit) nohit=$((nohit + 1)) ;;
	*) passed=$((passed + 1)) ;;
	esac
done

{
	echo "program | transient | delay | error (rate $ERROR_RATE) | result"
	printf '%s\n' "${rows[@]}"
} | tee "$OUT/faults.txt"
echo "(emu, cache $CACHE, line $LINE, transient rate $TRANSIENT_RATE; logs in $OUT/PROG/fault.KIND.RATE.{out,err})"
echo "$passed passed, $failed failed, $nohit where no injected error hit (raise ERROR_RATE)"
[ "$failed" -eq 0 ]
