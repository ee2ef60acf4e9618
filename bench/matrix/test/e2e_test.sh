#!/usr/bin/env bash
# CPU end-to-end test of bench/matrix/matrix.py (no GPU, no nvcc): fake
# programs (fakeprog.cpp against mock/cuda_runtime.h, with the real
# memmode.h / forkpoint.h) and a fake blocker stand in for the corpus builds;
# the runner plans, forks, parses, compares checksums and writes the CSV as
# on the GPU machine (--skip-build). Checks the rows, ratios, skips and that
# a planted wrong checksum and a failing run are reported loudly (exit 1).
#
#   bench/matrix/test/e2e_test.sh      # prints "e2e_test: N passed, N failed"
set -uo pipefail
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
CXX=${CXX:-g++}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out
mkdir -p "$out/bin" "$out/src"
"$CXX" -std=c++17 -O1 -Wall -Wextra -Werror -I"$here/mock" -include "$here/../memmode.h" "$here/fakeprog.cpp" \
	-o "$tmp/orig" || { echo "e2e_test: build failed"; exit 2; }
"$CXX" -std=c++17 -O1 -Wall -Wextra -Werror -DFAKE_PORT -I"$here/mock" -include "$here/../forkpoint.h" \
	"$here/fakeprog.cpp" -o "$tmp/port" || { echo "e2e_test: build failed"; exit 2; }
# The fork point measures free memory without touching the stack limit
# (the runtime raises it only for the cache and takes what the driver
# reserved off its budget): the mock charges 4 MiB per KiB of stack, and
# the default 1 KiB stays whatever BAM_STACK_BYTES says.
fork_free() { env BENCH_GPU_BUDGET_AUTO="16777216 201326592" MOCK_STACK_COST_MIB=4 "$@" "$tmp/port" 2>&1 >/dev/null | grep -o 'free_bytes=[0-9]*'; }
if [ "$(fork_free)" = "free_bytes=$(((1024 - 4) << 20))" ] && [ "$(fork_free BAM_STACK_BYTES=4k)" = "free_bytes=$(((1024 - 4) << 20))" ]; then
	fork_ok=1
else
	fork_ok=0
	echo "fork point: $(fork_free) / $(fork_free BAM_STACK_BYTES=4k)"
fi
progs="bfs_warp cc vectoradd"
for p in $progs; do
	cp "$tmp/orig" "$out/bin/$p.orig"
	cp "$tmp/port" "$out/bin/$p.auto"
	cp "$tmp/port" "$out/bin/$p.opt"
	echo "// $p --auto; bench_fork::point()" >"$out/src/$p.auto.cu"
	echo "// $p --opt auto; bench_fork::point()" >"$out/src/$p.opt.cu"
done
cp "$out/src/vectoradd.auto.cu" "$out/src/vectoradd.opt.cu" # --opt auto chose nothing
cp "$here/fakeblocker.sh" "$out/bin/blocker"

pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# row PROGRAM SIZE VARIANT BACKEND OPT: the CSV row's fields as "k=v" lines
row() {
	python3 - "$out/results.csv" "$@" <<'PY'
import csv, sys
f, p, s, v, b, o = sys.argv[1:]
for r in csv.DictReader(open(f)):
    if (r["program"], r["size_class"], r["variant"], r["backend"], r["opt"]) == (p, s, v, b, o):
        for k, x in r.items():
            print("%s=%s" % (k, x))
PY
}
field() { row "$1" "$2" "$3" "$4" "$5" | sed -n "s/^$6=//p"; }
check() { # DESC GOT WANT
	if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi
}

# 1. a clean run
FAKE_STATE=$tmp/state python3 "$here/../matrix.py" "$out" --skip-build --quick --reps 2 --programs bfs_warp,cc,vectoradd \
	--gen-parallel 2 --export "$tmp/exp" >"$tmp/run1.log" 2>&1
check "clean run exits 0" "$?" 0
check "bfs_warp fit gpu ok" "$(field bfs_warp fit original gpu - checksum_ok)" yes
check "bfs_warp fit gpu reps" "$(field bfs_warp fit original gpu - reps)" 2
check "bfs_warp fit gpu ms" "$(field bfs_warp fit original gpu - ms_median)" 10.000
check "uvm ratio to gpu" "$(field bfs_warp fit original uvm - ratio_to_gpu)" 2.000
check "port hbm ratio to gpu" "$(field bfs_warp fit port hbm none ratio_to_gpu)" 1.100
check "port host ratio to zero-copy" "$(field bfs_warp fit port host auto ratio_to_zerocopy)" 1.200
check "spmv-style sums: vectoradd adds its two kernels" "$(field vectoradd fit original gpu - ms_median)" 20.000
check "nofit reference runs unblocked" "$(field cc nofit original gpu-unblocked - checksum_ok)" yes
check "nofit zero-copy ok" "$(field cc nofit original zerocopy - checksum_ok)" yes
check "nofit uvm skipped" "$(field cc nofit original uvm - checksum_ok)" skipped
check "nofit hbm skipped" "$(field cc nofit port hbm none checksum_ok)" skipped
check "nofit emu ok" "$(field cc nofit port emu auto checksum_ok)" yes
check "identical --opt auto is not run again" "$(field vectoradd fit port '*' auto checksum_ok)" skipped
if [ "$fork_ok" = 1 ]; then ok; else bad "the fork point measures free memory with the stack limit as the program found it"; fi
# nofit ports measure the free memory at their start (forkpoint.h): cache 16 MiB (--quick) + reserve 192 MiB
if grep -q 'BENCH_GPU_BUDGET_AUTO=16777216 201326592' "$out"/logs/cc.nofit.auto.all.B.jobs &&
	! grep -q 'BUDGET' "$out"/logs/cc.fit.auto.all.jobs; then ok; else bad "the budget check only on nofit ports"; fi
# phase B's processes start early but run their jobs only under the blocker (the gate), phase A's without it
nb=$(cat "$out"/logs/*.nofit.port.*.err "$out"/logs/*.nofit.original.zerocopy.*.err | grep -c "fake: blocker_free=$((384 << 20))\$")
nbw=$(ls "$out"/logs/*.nofit.port.*.err "$out"/logs/*.nofit.original.zerocopy.*.err | wc -l)
na=$(cat "$out"/logs/*.fit.*.err "$out"/logs/*.nofit.original.gpu-unblocked.*.err | grep -c "fake: blocker_free=$((384 << 20))\$")
check "jobs under the blocker: all of phase B's, none of phase A's" "$nb/$nbw $na" "$nbw/$nbw 0"
# the mock's cudaMemGetInfo says 1024 MiB free: BAM_GPU_BUDGET = 1024 - 16 - 192 MiB
if grep -q 'fake: BAM_GPU_BUDGET=855638016' "$out"/logs/cc.nofit.port.emu.auto.0.err &&
	grep -q 'forkpoint: free_bytes=1073741824 gpu_budget=855638016' "$out"/logs/cc.nofit.port.host.none.0.err &&
	! grep -q 'BAM_GPU_BUDGET' "$out"/logs/cc.fit.port.host.none.0.err; then ok; else
	bad "BAM_GPU_BUDGET = free at the job's start - cache - reserve"; cat "$out"/logs/cc.nofit.port.emu.auto.0.err; fi
check "the CSV says what the job saw" "$(field cc nofit port host none job_free_mib)/$(field cc nofit port host none gpu_budget_mib)" "1024/816"
# the blocker left 384 MiB (--quick) + a 500 MiB context; the fake query then reports 384 MiB
check "meta: measured free memory under the blocker" \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["blocked_free_bytes"])' "$out/meta.json")" $((384 << 20))
if grep -q '^cc  *1.10x  *1.10x  *1.20x  *1.20x  *1.20x  *1.20x$' "$tmp/run1.log"; then ok; else
	bad "per-program ratio table"; grep -A5 'per program' "$tmp/run1.log"; fi
# --export: three files, the rest in one archive
ls "$tmp/exp" >"$tmp/exp.ls" 2>&1
check "--export writes 3 files" "$(tr '\n' ' ' <"$tmp/exp.ls")" "matrix.tgz results.csv summary.txt "
tar tzf "$tmp/exp/matrix.tgz" >"$tmp/tgz.ls" 2>&1
if grep -qx 'results.csv' "$tmp/tgz.ls" && grep -qx 'jobs.csv' "$tmp/tgz.ls" && grep -qx 'meta.json' "$tmp/tgz.ls" &&
	grep -qx 'summary.txt' "$tmp/tgz.ls" && grep -q '^logs/cc.nofit.port.emu.auto.0.err$' "$tmp/tgz.ls" &&
	grep -q 'bar: data fits' "$tmp/exp/summary.txt"; then ok; else bad "matrix.tgz holds the CSVs, meta, summary and logs"; head "$tmp/tgz.ls"; fi
if grep -q 'BENCH_HOST_SEQS=@' "$out"/logs/bfs_warp.nofit.orig.all.B.jobs; then ok; else bad "zero-copy gets the allocation log"; fi
if grep -q 'BENCH_GPU_SEQS=2' "$out"/logs/cc.fit.orig.all.jobs && ! grep -q 'BENCH_GPU_SEQS' "$out"/logs/bfs_warp.fit.orig.all.jobs; then ok; else
	bad "cc's labels named as filled on the GPU"; fi
check "the allocation log names the host-filled array" "$(cat "$out/logs/bfs_warp.fit.alloc")" "$(printf '0 4194304 cudaMalloc 1\n1 4194304 cudaMalloc 0')"
n=$(grep -c . "$out/results.csv")
check "rows: header + 2 x 18 + vectoradd 14 (--opt auto rows aliased)" "$n" 51
check "one input per process: fit originals forked 6 jobs from one parent" \
	"$(grep -c . "$out/logs/bfs_warp.fit.orig.all.jobs")" 6

if grep -q 'bar: data fits, port hbm / original (opt auto): max 1.10x (bfs_warp); 3 of 3 programs <= 1.15x' "$tmp/run1.log" &&
	grep -q 'bar: nofit, port host / zero-copy (opt none): geomean 1.20x, max 1.20x (bfs_warp), 0 above 1.25x' "$tmp/run1.log" &&
	grep -q 'bar: fit, port host / zero-copy (opt none): .*not faster than UVM: bfs_warp, cc, vectoradd' "$tmp/run1.log"; then ok; else
	bad "the bars are summarised"; grep 'bar:' "$tmp/run1.log"; fi
# the plot script over this CSV (with a do-nothing matplotlib where none is installed)
mpl_path=""
python3 -c 'import matplotlib' 2>/dev/null || mpl_path=$here/fake_mpl
PYTHONPATH=$mpl_path python3 "$here/../plot.py" "$out/results.csv" "$tmp/fig" >"$tmp/plot.log" 2>&1
check "plot.py exits 0" "$?" 0
if [ -s "$tmp/fig.png" ] && [ -s "$tmp/fig.svg" ]; then ok; else bad "plot.py wrote PNG and SVG"; cat "$tmp/plot.log"; fi
check "plot data: vectoradd's --opt auto bars come from its --auto rows" "$(cd "$here/.." && python3 -c '
import sys, plot
progs, data = plot.load(sys.argv[1])
print(progs, data[("vectoradd", "fit", ("port", "host", "auto"))]["opt"], ("cc", "nofit", ("original", "gpu", "-")) in data)' "$out/results.csv")" \
	"['bfs_warp', 'cc', 'vectoradd'] none True"

# 2. a wrong checksum and a failing run are loud
rm -rf "$out/logs" "$out/results.csv"
FAKE_STATE=$tmp/state FAKE_BAD=cc.host FAKE_FAIL=bfs_warp.emu python3 "$here/../matrix.py" "$out" --skip-build --quick \
	--programs bfs_warp,cc,vectoradd --gen-parallel 3 >"$tmp/run2.log" 2>&1
check "a mismatch exits 1" "$?" 1
check "cc host fit mismatch" "$(field cc fit port host none checksum_ok)" MISMATCH
check "cc host nofit mismatch" "$(field cc nofit port host auto checksum_ok)" MISMATCH
check "cc emu still ok" "$(field cc fit port emu none checksum_ok)" yes
check "bfs_warp emu failed" "$(field bfs_warp fit port emu none checksum_ok)" FAILED
if grep -q '\*\*\* MISMATCH \*\*\*' "$tmp/run2.log" && grep -q 'ROWS WITHOUT A MATCHING CHECKSUM' "$tmp/run2.log"; then ok; else
	bad "the table shouts"; tail -20 "$tmp/run2.log"; fi

# 2b. too little free memory at a blocked port's start: a clear failure, not a run with a wrong budget
rm -rf "$out/logs" "$out/results.csv"
FAKE_STATE=$tmp/state MOCK_FREE_MIB=100 python3 "$here/../matrix.py" "$out" --skip-build --quick --programs cc \
	>"$tmp/run2b.log" 2>&1
check "too little free memory exits 1" "$?" 1
check "nofit port failed" "$(field cc nofit port host none checksum_ok)" FAILED
if grep -q 'exit 4: forkpoint: error: 100 MiB free on the GPU at the job.s start' "$out/results.csv"; then ok; else
	bad "the note says why"; field cc nofit port host none note; fi
check "fit port unaffected" "$(field cc fit port host none checksum_ok)" yes

# 2c. --deadline-s: what did not start in time is NOT-RUN (loud), the rest is reported
rm -rf "$out/logs" "$out/results.csv"
FAKE_STATE=$tmp/state python3 "$here/../matrix.py" "$out" --skip-build --quick --programs cc --deadline-s 1 \
	>"$tmp/run2c.log" 2>&1
check "a deadline exits 1" "$?" 1
check "row not run" "$(field cc fit port host none checksum_ok)" NOT-RUN
if grep -q '\*\*\* NOT-RUN \*\*\*' "$tmp/run2c.log"; then ok; else bad "NOT-RUN shouted"; tail "$tmp/run2c.log"; fi

# 2d. a program still running at the deadline is killed with the job it forked (nothing left on the GPU)
rm -rf "$out/logs" "$out/results.csv"
FAKE_STATE=$tmp/state FAKE_SLEEP=cc.gpu timeout 60 python3 "$here/../matrix.py" "$out" --skip-build --quick \
	--programs cc --deadline-s 16 >"$tmp/run2d.log" 2>&1
check "a deadline with jobs running exits 1" "$?" 1
sleep 1
left=$(ps -eo args | grep -c "^$out/bin/cc\.")
check "no program or job left running" "$left" 0
if grep -q 'cc,fit,original,gpu,-,.*FAILED,.*not run (killed at --deadline-s); exit 124' "$out/results.csv" &&
	grep -q 'cc,nofit,port,emu,auto,90.000,' "$out/results.csv"; then ok; else
	bad "the killed jobs are FAILED (exit 124), the blocked phase still ran"; cat "$out/results.csv"; fi

# 2d'. a job past its --timeout (no deadline) is FAILED with a note naming the limit: slow, not wrong
rm -rf "$out/logs" "$out/results.csv"
FAKE_STATE=$tmp/state FAKE_SLEEP=cc.gpu timeout 60 python3 "$here/../matrix.py" "$out" --skip-build --quick \
	--programs cc --timeout 2 >"$tmp/run2t.log" 2>&1
check "a job past its limit exits 1" "$?" 1
if grep -q 'cc,fit,original,gpu,-,.*FAILED,.*exit 124 (ran past the job limit of 2 s; --timeout raises it)' "$out/results.csv"; then ok; else
	bad "the note names the job limit"; field cc fit original gpu - note; fi

# 2e. the blocker fails to start: the runner stops at once, no phase-B program is left waiting at the gate
rm -rf "$out/logs" "$out/results.csv"
FAKE_STATE=$tmp/state FAKE_BLOCKER_FAIL=1 timeout 60 python3 "$here/../matrix.py" "$out" --skip-build --quick \
	--programs cc,vectoradd >"$tmp/run2e.log" 2>&1
rc=$?
sleep 1
check "a failed blocker stops the run (not a hang)" "$([ $rc -ne 0 ] && [ $rc -ne 124 ] && echo stopped || echo "rc=$rc")" stopped
check "no program left after a failed blocker" "$(ps -eo args | grep -c "^$out/bin/")" 0
if grep -q 'blocker did not start' "$tmp/run2e.log"; then ok; else bad "says the blocker failed"; tail -3 "$tmp/run2e.log"; fi

# 3. --no-fork: one process per job, each with its job's environment
rm -rf "$out/logs" "$out/results.csv"
FAKE_STATE=$tmp/state python3 "$here/../matrix.py" "$out" --skip-build --quick --programs bfs_warp --no-fork \
	>"$tmp/run3.log" 2>&1
check "--no-fork exits 0" "$?" 0
check "--no-fork: uvm ran as uvm" "$(field bfs_warp fit original uvm - ratio_to_gpu)" 2.000
check "--no-fork: emu port ran on emu" "$(field bfs_warp nofit port emu auto ratio_to_gpu)" 9.000
if grep -q 'forkpoint: free_bytes=1073741824 gpu_budget=855638016' "$out"/logs/bfs_warp.nofit.port.emu.auto.0.err; then ok; else
	bad "--no-fork: the budget is measured too"; fi

# 4. --dry-run runs nothing
rm -rf "$tmp/dry"
python3 "$here/../matrix.py" "$tmp/dry" --dry-run --quick --programs cc >"$tmp/dry.log" 2>&1
check "dry run exits 0" "$?" 0
if grep -q 'BAMGEN port -q --auto --opt auto' "$tmp/dry.log" && [ ! -e "$tmp/dry/results.csv" ]; then ok; else bad "dry run"; fi

if [ "$fail" -ne 0 ]; then echo "--- run1"; tail -40 "$tmp/run1.log"; fi
echo "e2e_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
