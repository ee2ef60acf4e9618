#!/usr/bin/env bash
# Differential test of `bamgen port` on the corpus (testdata/kernels): for each
# program, build the original with nvcc, port it with bamgen, build the port
# against the bundled runtime (runtime/cuda, libbam.a), run both on the same
# inputs and compare their `checksum:` lines, once per BaM backend, with a
# cache small enough that lines are evicted and written back during the run.
#
#   bench/difftest/run.sh                      # every program, hbm host emu
#   bench/difftest/run.sh spmv sssp            # some programs
#   BACKENDS="hbm" BAM_CACHE_BYTES=1M ARCH=sm_90 bench/difftest/run.sh
#   BAMGEN=/path/to/bamgen bench/difftest/run.sh   # no Go on the GPU machine
#   PORT_EXTRA="--ref" bench/difftest/run.sh        # also insert bam::array_ref
#
# Choices per program: bench/difftest/configs/PROG.yaml (a .bamgen.yaml) when
# present, else --auto. Arguments per program: bench/difftest/configs/PROG.args
# when present, else the program's defaults: each non-empty line that does not
# start with # is one run, with its own row (`PROG ARGS`), of the same build
# (bfs_modes: one line per memory mode). ARGS_DIR=DIR takes PROG.args from
# DIR first (tiny_cache.sh: smaller inputs). BUILD_ONLY=1 stops after the
# builds; BUILD_FROM=DIR takes the builds of such a run instead of compiling
# (runs on several backends in parallel, one OUT each). A relative tolerance for the
# checksum: bench/difftest/configs/PROG.tol (else exact equality).
#
# Needs a GPU and nvcc. Prints a table, then "N passed, N failed"; exits 1 on
# any mismatch or failure. Work files and logs go to $OUT.
set -uo pipefail

case "${1:-}" in -h | --help)
	sed -n '2,/^set /p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
	exit 0
	;;
esac

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ARCH=${ARCH:-sm_80}
BACKENDS=${BACKENDS:-"hbm host emu"} # also hbm-resident, host-direct, host-resident (placement in place)
CACHE=${BAM_CACHE_BYTES:-2M}     # small: forces eviction and write-back on every program
LINE=${BAM_LINE_BYTES:-}          # empty: each backend's default line size (host 512 B, others 4 KiB)
OUT=${OUT:-$ROOT/build/difftest}
TIMEOUT=${TIMEOUT:-300}           # seconds per run
PORT_NVCCFLAGS=${PORT_NVCCFLAGS:--O2} # e.g. "-O2 -Xptxas -O1" to tell runtime races from port bugs
ORIG_NVCCFLAGS=${ORIG_NVCCFLAGS:--O2} # keep equal to PORT_NVCCFLAGS: ptxas levels change float contraction
PORT_EXTRA=${PORT_EXTRA:-}        # more port flags for every program, e.g. "--ref"
CONFIGS=$ROOT/bench/difftest/configs
ARGS_DIR=${ARGS_DIR:-}             # PROG.args here override configs/PROG.args
mkdir -p "$OUT"
[ -z "$ARGS_DIR" ] || [ -d "$ARGS_DIR" ] || { echo "difftest: ARGS_DIR=$ARGS_DIR is not a directory" >&2; exit 2; }

die() { echo "difftest: $*" >&2; exit 2; }
command -v "$NVCC" >/dev/null 2>&1 || [ -x "$NVCC" ] || die "nvcc not found (set NVCC)"

echo "difftest: building bamgen and the runtime (ARCH=$ARCH)"
if [ -n "${BAMGEN:-}" ]; then # a prebuilt bamgen (machines without Go)
	cp "$BAMGEN" "$OUT/bamgen" || die "BAMGEN=$BAMGEN: cannot copy"
else
	(cd "$ROOT" && go build -o "$OUT/bamgen" ./cmd/bamgen) || die "go build failed"
fi
make -C "$ROOT/runtime/cuda" ARCH="$ARCH" -j"$(nproc)" lib >"$OUT/runtime-build.log" 2>&1 ||
	die "make -C runtime/cuda failed; see $OUT/runtime-build.log"
read -r -a BAMFLAGS <<<"$("$OUT/bamgen" flags --prefix "$ROOT/runtime/cuda")"

programs=("$@")
if [ ${#programs[@]} -eq 0 ]; then
	for d in "$ROOT"/testdata/kernels/*/; do
		p=$(basename "$d")
		[ -f "$d/$p.cu" ] && programs+=("$p")
	done
fi

# same_checksum WANT GOT TOL: equal strings, or (TOL set) numbers within a
# relative tolerance.
same_checksum() {
	[ "$1" = "$2" ] && return 0
	[ -n "$3" ] || return 1
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a; exit !(d <= t * m) }'
}

# checksum_of LOG: the value of the last `checksum:` line, or "-".
checksum_of() { grep -E '^checksum:' "$1" 2>/dev/null | tail -1 | sed 's/^checksum:[[:space:]]*//' || true; }

# build_one PROG: original and port of one program; writes $OUT/PROG/status
# (ok or the step that failed). Independent per program, so they run in
# parallel: nvcc dominates the whole run otherwise.
build_one() {
	local p=$1 src=$ROOT/testdata/kernels/$1/$1.cu work=$OUT/$1 choice=(--auto) status=ok
	mkdir -p "$work"
	if [ -n "${BUILD_FROM:-}" ]; then
		cp "$BUILD_FROM/$p/status" "$work/status" 2>/dev/null || echo build-missing >"$work/status"
		cp "$BUILD_FROM/$p/orig" "$BUILD_FROM/$p/port" "$work/" 2>/dev/null
		return
	fi
	[ -f "$CONFIGS/$p.yaml" ] && choice=(--config "$CONFIGS/$p.yaml")
	if ! "$NVCC" -std=c++17 $ORIG_NVCCFLAGS -arch="$ARCH" "$src" -o "$work/orig" >"$work/orig-build.log" 2>&1; then
		status="orig-build-failed"
	elif ! "$OUT/bamgen" port -q "${choice[@]}" $PORT_EXTRA -o "$work/port.cu" "$src" 2>"$work/port.log"; then
		status="port-failed"
	elif ! "$NVCC" $PORT_NVCCFLAGS -arch="$ARCH" "${BAMFLAGS[@]:0:2}" -I"$(dirname "$src")" "$work/port.cu" "${BAMFLAGS[@]:2}" -o "$work/port" >"$work/port-build.log" 2>&1; then
		status="port-build-failed"
	fi
	echo "$status" >"$work/status"
}

JOBS=${JOBS:-$(nproc)}
for p in "${programs[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
	build_one "$p" &
done
wait
if [ "${BUILD_ONLY:-0}" = 1 ]; then
	for p in "${programs[@]}"; do echo "difftest: built $p: $(cat "$OUT/$p/status")"; done
	exit 0
fi

passed=0 failed=0
rows=()
# run_one PROG I ARGS...: one run of the original and of the port on every
# backend with ARGS; appends a row and counts it.
run_one() {
	local p=$1 i=$2 work=$OUT/$1 tol="" row status want got rc b
	shift 2
	local args=("$@")
	[ -f "$CONFIGS/$p.tol" ] && tol=$(grep -v '^#' "$CONFIGS/$p.tol" | head -1)
	row="$p"
	[ ${#args[@]} -gt 0 ] && row+=" ${args[*]}"
	status=$(cat "$work/status" 2>/dev/null || echo build-missing)
	want=-
	if [ "$status" = ok ]; then
		timeout "$TIMEOUT" "$work/orig" "${args[@]}" >"$work/orig$i.out" 2>"$work/orig$i.err"
		want=$(checksum_of "$work/orig$i.out")
		[ -n "$want" ] || status="orig-no-checksum"
	fi
	row+=" | ${want:--}"
	for b in $BACKENDS; do
		got=-
		if [ "$status" = ok ] || [ "${status#mismatch}" != "$status" ]; then
			# In a subshell so a crash's "Aborted" lands in the log, not the table.
			# hbm, host and emu go through the cache (placement off);
			# hbm-resident reads the data in place, host-direct zero-copy
			# (no budget: else the host backend copies what fits into GPU memory);
			# host-resident copies it into GPU memory (the host default).
			case $b in
			hbm-resident) env=(BAM_BACKEND=hbm) ;;
			host-direct) env=(BAM_BACKEND=host BAM_GPU_BUDGET=0 BAM_HOST_PLACEMENT=direct) ;;
			host-resident) env=(BAM_BACKEND=host) ;;
			*) env=(BAM_BACKEND="$b" BAM_GPU_BUDGET=0 BAM_HOST_PLACEMENT=cache) ;;
			esac
			[ -n "$LINE" ] && env+=(BAM_LINE_BYTES="$LINE")
			(env "${env[@]}" BAM_CACHE_BYTES="$CACHE" BAM_STATS=0 \
				timeout "$TIMEOUT" "$work/port" "${args[@]}") >"$work/port$i.$b.out" 2>"$work/port$i.$b.err"
			rc=$?
			got=$(checksum_of "$work/port$i.$b.out")
			if [ $rc -ne 0 ]; then
				got="${got:-exit $rc}"
				status="mismatch"
			elif ! same_checksum "$want" "$got" "$tol"; then
				status="mismatch"
			fi
		fi
		row+=" | ${got:--}"
	done
	if [ "$status" = ok ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
	rows+=("$row | $status")
	# One line per row as it ends: a run cut short by an outer timeout
	# still says which rows passed and which one it was in.
	echo "difftest: row $row | $status" >&2
}

for p in "${programs[@]}"; do
	lines=()
	args_file=$CONFIGS/$p.args
	[ -n "$ARGS_DIR" ] && [ -f "$ARGS_DIR/$p.args" ] && args_file=$ARGS_DIR/$p.args
	[ -f "$args_file" ] && mapfile -t lines < <(grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$args_file")
	[ ${#lines[@]} -gt 0 ] || lines=("")
	i=0
	for line in "${lines[@]}"; do
		read -r -a args <<<"$line"
		# the first run keeps the file names of a single run (orig.out, port.hbm.out)
		if [ $i -eq 0 ]; then run_one "$p" "" "${args[@]}"; else run_one "$p" ".$i" "${args[@]}"; fi
		i=$((i + 1))
	done
done

header="program | original"
for b in $BACKENDS; do header+=" | $b"; done
header+=" | result"
# Aligned table without column(1), which minimal GPU images lack.
{
	echo "$header"
	printf '%s\n' "${rows[@]}"
} | awk -F' [|] ' '
	{ for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } n = NR; if (NF > nf) nf = NF }
	END { for (r = 1; r <= n; r++) { line = ""; for (i = 1; i <= nf; i++) line = line sprintf("%-*s", w[i], cell[r, i]) (i < nf ? " | " : ""); print line } }'
echo "(cache $CACHE, line ${LINE:-backend default}, arch $ARCH; logs in $OUT)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
