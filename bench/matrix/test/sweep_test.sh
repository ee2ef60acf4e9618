#!/usr/bin/env bash
# CPU test of bench/matrix/sweep.py (no GPU, no nvcc): the fake port of
# e2e_test.sh (fakeprog.cpp with forkpoint.h against the mock CUDA runtime)
# stands in for OUTDIR/bin/cc.opt and the fake blocker for the blocker.
# Checks the jobs' environments, their statuses in sweep.csv and on the
# console, the blocker's budget, the exit status and bad job specs.
#
#   bench/matrix/test/sweep_test.sh      # prints "sweep_test: N passed, N failed"
set -uo pipefail
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
CXX=${CXX:-g++}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out
mkdir -p "$out/bin"
"$CXX" -std=c++17 -O1 -Wall -Wextra -Werror -DFAKE_PORT -I"$here/mock" -include "$here/../forkpoint.h" \
	"$here/fakeprog.cpp" -o "$out/bin/cc.opt" || { echo "sweep_test: build failed"; exit 2; }
cp "$here/fakeblocker.sh" "$out/bin/blocker"
export FAKE_STATE=$tmp/blocker.state
: >"$FAKE_STATE"

pass=0 fail=0
check() { # DESC GOT WANT
	if [ "$2" = "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1: got '$2', want '$3'"; fi
}
col() { # ID FIELD: a field of sweep.csv's row ID
	python3 - "$out/sweep.csv" "$1" "$2" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["id"] == sys.argv[2]:
        print(r[sys.argv[3]])
PY
}

python3 "$here/../sweep.py" "$out" cc --skip-build --leave-mib 640 --timeout 30 \
	'ok:BAM_BACKEND=emu,BAM_GPU_BUDGET=123' 'fails:BAM_BACKEND=emu,FAKE_FAIL=cc.emu' \
	'host:BAM_BACKEND=host,BENCH_GPU_BUDGET_AUTO=16777216 201326592' >"$tmp/console" 2>&1
check "exit status with a failing job" "$?" 1
check "ok's status" "$(col ok status)" 0
check "fails' status" "$(col fails status)" 1
check "host's status" "$(col host status)" 0
check "ok's time (cc's sweeps= line)" "$(col ok ms)" 90.000
check "host's time" "$(col host ms)" 30.000
check "ok's checksum" "$(col ok checksum | grep -c '^[0-9][0-9]*$')" 1
check "the failing job's checksum is empty" "$(col fails checksum)" ""
check "host's fork point budget kept" "$(col host messages | grep -c '^forkpoint: free_bytes=[0-9]* gpu_budget=[0-9]*$')" 1
check "console row of the failing job" "$(grep -c '^fails  *exit 1 ' "$tmp/console")" 1
check "the job's own variable" "$(grep -c 'fake: BAM_GPU_BUDGET=123' "$out/logs/ok.err")" 1
check "the blocker left 640 MiB to the job" "$(grep -c "fake: blocker_free=$((640 << 20))" "$out/logs/ok.err")" 1
check "emu jobs get the matrix's SSD" "$(grep '^sweep.ok' "$out/logs/sweep.jobs" | tr '\t' '\n' | grep -c '^BAM_EMU_IOPS=1000000$')" 1
check "host jobs do not" "$(grep '^sweep.host' "$out/logs/sweep.jobs" | tr '\t' '\n' | grep -c '^BAM_EMU_')" 0
check "every job loads modules eagerly" "$(grep -c 'CUDA_MODULE_LOADING=EAGER' "$out/logs/sweep.jobs")" 3
check "the blocker stopped" "$(cat "$FAKE_STATE")" ""

python3 "$here/../sweep.py" "$out" cc --skip-build 'ok:BAM_BACKEND=emu' >"$tmp/console" 2>&1
check "every job passed: exit 0" "$?" 0
for bad in 'nocolon' 'x:lower=1' 'x y:A=1' 'x:A'; do
	python3 "$here/../sweep.py" "$out" cc --skip-build "$bad" >"$tmp/console" 2>&1
	check "job spec '$bad' refused" "$?:$(grep -c '^sweep: error: job' "$tmp/console")" "1:1"
done
python3 "$here/../sweep.py" "$out" cc --skip-build 'a:A=1' 'a:B=2' >"$tmp/console" 2>&1
check "duplicate IDs refused" "$?:$(grep -c 'same ID' "$tmp/console")" "1:1"
python3 "$here/../sweep.py" "$out" bfs_warp --skip-build 'a:A=1' >"$tmp/console" 2>&1
check "missing binary named" "$?:$(grep -c 'bfs_warp.opt is missing' "$tmp/console")" "1:1"

echo "sweep_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
