#!/usr/bin/env bash
# CPU test of bench/matrix/memmode.h (no GPU, no nvcc): builds
# shim_test.cpp with g++ against mock/cuda_runtime.h, the shim force-included
# as nvcc -include does, runs the scenarios in every BENCH_MEM mode and checks
# where each allocation went, which copies became cudaMemcpyDefault, where
# prefetches and advice happen, the oversubscription refusal (exit 77), the
# allocation log and that every allocation is freed by the matching call.
#
#   bench/matrix/test/shim_test.sh        # prints "shim_test: N passed, N failed"
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CXX=${CXX:-g++}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# MOCK_CUDA13=1: the CUDA 13 signatures of cudaMemAdvise / cudaMemPrefetchAsync
"$CXX" -std=c++17 -O1 -Wall -Wextra -Werror ${MOCK_CUDA13:+-DMOCK_CUDA13} -I"$here/mock" -include "$here/../memmode.h" \
	"$here/shim_test.cpp" -o "$tmp/t" || { echo "shim_test: build failed"; exit 2; }

pass=0 fail=0
# run NAME SCENARIO [ENV...]: output in $tmp/NAME.out (stdout+stderr), rc in $tmp/NAME.rc
run() {
	local name=$1 scen=$2
	shift 2
	env "$@" "$tmp/t" "$scen" >"$tmp/$name.out" 2>&1
	echo $? >"$tmp/$name.rc"
}
# expect NAME DESCRIPTION grep-args...: the output of NAME matches
expect() {
	local name=$1 what=$2
	shift 2
	if grep -q "$@" "$tmp/$name.out"; then pass=$((pass + 1)); else
		fail=$((fail + 1)); echo "FAIL $name: $what (grep $*)"; sed 's/^/    /' "$tmp/$name.out"; fi
}
reject() {
	local name=$1 what=$2
	shift 2
	if grep -q "$@" "$tmp/$name.out"; then
		fail=$((fail + 1)); echo "FAIL $name: $what (unexpected grep $*)"; sed 's/^/    /' "$tmp/$name.out"; else pass=$((pass + 1)); fi
}
rc_is() {
	local name=$1 want=$2
	if [ "$(cat "$tmp/$name.rc")" = "$want" ]; then pass=$((pass + 1)); else
		fail=$((fail + 1)); echo "FAIL $name: exit $(cat "$tmp/$name.rc"), want $want"; sed 's/^/    /' "$tmp/$name.out"; fi
}
count() { grep -c -- "$2" "$tmp/$1.out" || true; }
count_is() {
	local name=$1 pat=$2 want=$3 got
	got=$(count "$name" "$pat")
	if [ "$got" = "$want" ]; then pass=$((pass + 1)); else
		fail=$((fail + 1)); echo "FAIL $name: $got lines match '$pat', want $want"; sed 's/^/    /' "$tmp/$name.out"; fi
}

# --- copyin: cudaMalloc'd arrays -------------------------------------------
for m in asis gpu; do
	run "copyin-$m" copyin BENCH_MEM=$m BENCH_ALLOC_LOG="$tmp/copyin-$m.log"
	rc_is "copyin-$m" 0
	count_is "copyin-$m" '^cudaMalloc ' 4
	reject "copyin-$m" "no managed or host memory in $m mode" -E 'cudaMallocManaged|cudaHostAlloc|Prefetch|Advise'
	expect "copyin-$m" "the program's own copy kinds" 'cudaMemcpy device <- pageable 2097152 HostToDevice'
	expect "copyin-$m" "leaks nothing" -- '-- leaked 0'
	expect "copyin-$m" "summary line" "memmode: mode=$m data_allocs=3 peak_data_bytes=6291456"
done
# the allocation log: seq bytes api host_filled; the flag (seq 3) is not data
if diff <(printf '0 2097152 cudaMalloc 1\n1 2097152 cudaMalloc 1\n2 2097152 cudaMalloc 0\n') "$tmp/copyin-gpu.log" >/dev/null; then
	pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL copyin-gpu: allocation log"; cat "$tmp/copyin-gpu.log"; fi

run copyin-uvm copyin BENCH_MEM=uvm BENCH_HOST_SEQS=0,1
rc_is copyin-uvm 0
count_is copyin-uvm '^cudaMallocManaged 2097152' 3
expect copyin-uvm "the flag stays in device memory" '^cudaMalloc 4$'
count_is copyin-uvm 'cudaMemAdvise managed 2097152 ReadMostly' 2
count_is copyin-uvm 'cudaMemAdvise managed 2097152 PreferredLocation' 1
expect copyin-uvm "copies into managed memory use cudaMemcpyDefault" 'cudaMemcpy managed <- pageable 2097152 Default'
expect copyin-uvm "a copy into the middle of an array is found" 'cudaMemcpy managed <- pageable 1048576 Default'
expect copyin-uvm "the flag copy keeps its kind" 'cudaMemcpy device <- pageable 4 HostToDevice'
# three pending prefetches at the first copy, then one after each data fill
count_is copyin-uvm 'cudaMemPrefetchAsync managed 2097152' 5
expect copyin-uvm "copy back with cudaMemcpyDefault" 'cudaMemcpy pageable <- managed 2097152 Default'
expect copyin-uvm "async copy back with cudaMemcpyDefault" 'cudaMemcpyAsync pageable <- managed 1048576 Default'
count_is copyin-uvm 'cudaFree managed' 3
expect copyin-uvm "leaks nothing" -- '-- leaked 0'
expect copyin-uvm "summary counts the moved bytes" 'moved_bytes=6291456'

run copyin-zc-log copyin BENCH_MEM=zerocopy BENCH_HOST_SEQS=@"$tmp/copyin-gpu.log"
count_is copyin-zc-log '^cudaHostAlloc 2097152' 2
expect copyin-zc-log "the array the GPU fills stays in GPU memory (from the log)" '^cudaMalloc 2097152'
run copyin-nolog copyin BENCH_MEM=zerocopy BENCH_HOST_SEQS=@"$tmp/none.log"
rc_is copyin-nolog 3

run copyin-uvm-nolist copyin BENCH_MEM=uvm
count_is copyin-uvm-nolist 'ReadMostly' 3

run copyin-zc copyin BENCH_MEM=zerocopy BENCH_HOST_SEQS=0,1
rc_is copyin-zc 0
count_is copyin-zc '^cudaHostAlloc 2097152 flags=2' 2
expect copyin-zc "the array the GPU fills stays in GPU memory" '^cudaMalloc 2097152'
expect copyin-zc "copies into mapped memory use cudaMemcpyDefault" 'cudaMemcpy pinned <- pageable 2097152 Default'
reject copyin-zc "no prefetch or advice in zerocopy mode" -E 'Prefetch|Advise'
count_is copyin-zc 'cudaFreeHost pinned' 2
reject copyin-zc "every free matches its allocation" 'WRONG FREE'
expect copyin-zc "leaks nothing" -- '-- leaked 0'

run copyin-zc-all copyin BENCH_MEM=zerocopy
count_is copyin-zc-all '^cudaHostAlloc 2097152' 3

run copyin-small copyin BENCH_MEM=uvm BENCH_MIN_BYTES=4194304
count_is copyin-small '^cudaMallocManaged' 0

# the guard: 3 x 2 MiB managed + 256 MiB margin on a GPU with 260 MiB free
run copyin-oversub copyin BENCH_MEM=uvm MOCK_FREE_MIB=260
rc_is copyin-oversub 77
expect copyin-oversub "says why it skips, at the third array" 'memmode: skip: cudaMalloc of 2 MiB would make 6 MiB'
run copyin-fits copyin BENCH_MEM=uvm MOCK_FREE_MIB=263
rc_is copyin-fits 0
run copyin-zc-nolimit copyin BENCH_MEM=zerocopy MOCK_FREE_MIB=1
rc_is copyin-zc-nolimit 0

run badmode copyin BENCH_MEM=hbm
rc_is badmode 3
expect badmode "names the accepted modes" 'expected gpu, uvm, zerocopy or asis'
run badseqs copyin BENCH_MEM=uvm BENCH_HOST_SEQS=1,x
rc_is badseqs 3

# --- managed: cc ------------------------------------------------------------
run managed-asis managed BENCH_MEM=asis
reject managed-asis "as written: no hints" -E 'Prefetch|Advise'
for m in gpu uvm; do
	run "managed-$m" managed BENCH_MEM=$m BENCH_ALLOC_LOG="$tmp/managed-$m.log"
	rc_is "managed-$m" 0
	count_is "managed-$m" '^cudaMallocManaged' 3
	# prefetched after the host filled them, at the first wrapped call
	if awk '/-- host filled/ { f = 1 } /cudaMemPrefetchAsync/ && !f { bad = 1 } /cudaMemPrefetchAsync/ && f { n++ }
		/-- first launch checked/ { exit !(n == 2 && !bad) }' "$tmp/managed-$m.out"; then pass=$((pass + 1)); else
		fail=$((fail + 1)); echo "FAIL managed-$m: two prefetches after the host fill, before the first launch check"; sed 's/^/    /' "$tmp/managed-$m.out"; fi
	expect "managed-$m" "leaks nothing" -- '-- leaked 0'
done
count_is managed-gpu 'PreferredLocation' 2
count_is managed-uvm 'ReadMostly' 2
if diff <(printf '0 4194304 cudaMallocManaged 1\n1 8388608 cudaMallocManaged 1\n') "$tmp/managed-gpu.log" >/dev/null; then
	pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL managed-gpu: allocation log"; cat "$tmp/managed-gpu.log"; fi
run managed-zc managed BENCH_MEM=zerocopy BENCH_HOST_SEQS=0,1
count_is managed-zc '^cudaHostAlloc' 2
expect managed-zc "the small flag stays managed as written" 'cudaMallocManaged 4 flags=1'
count_is managed-zc 'cudaFreeHost pinned' 2
reject managed-zc "every free matches its allocation" 'WRONG FREE'
# BENCH_GPU_SEQS: the second managed array is filled by a kernel
run managed-gpuseq managed BENCH_MEM=gpu BENCH_GPU_SEQS=1 BENCH_ALLOC_LOG="$tmp/managed-gpuseq.log"
if diff <(printf '0 4194304 cudaMallocManaged 1\n1 8388608 cudaMallocManaged 0\n') "$tmp/managed-gpuseq.log" >/dev/null; then
	pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL managed-gpuseq: allocation log"; cat "$tmp/managed-gpuseq.log"; fi
run managed-zc-gpuseq managed BENCH_MEM=zerocopy BENCH_HOST_SEQS=@"$tmp/managed-gpuseq.log"
count_is managed-zc-gpuseq '^cudaHostAlloc' 1
expect managed-zc-gpuseq "the kernel-filled array stays managed as written" 'cudaMallocManaged 8388608 flags=1'
run managed-uvm-gpuseq managed BENCH_MEM=uvm BENCH_GPU_SEQS=1
count_is managed-uvm-gpuseq 'ReadMostly' 1
count_is managed-uvm-gpuseq 'PreferredLocation' 1
run badgpuseqs managed BENCH_MEM=gpu BENCH_GPU_SEQS=a
rc_is badgpuseqs 3
run managed-oversub managed BENCH_MEM=gpu MOCK_FREE_MIB=265
rc_is managed-oversub 77

# --- hostalloc: pagerank ----------------------------------------------------
for m in gpu uvm; do
	run "hostalloc-$m" hostalloc BENCH_MEM=$m
	rc_is "hostalloc-$m" 0
	expect "hostalloc-$m" "the mapped list becomes managed memory" 'cudaMallocManaged 4194304'
	expect "hostalloc-$m" "prefetched before the first copy" 'cudaMemPrefetchAsync managed 4194304'
	expect "hostalloc-$m" "cudaHostGetDevicePointer gives the managed address" -- '-- device pointer == host pointer'
	expect "hostalloc-$m" "cudaFreeHost of it becomes cudaFree" 'cudaFree managed'
	reject "hostalloc-$m" "every free matches its allocation" 'WRONG FREE'
	expect "hostalloc-$m" "leaks nothing" -- '-- leaked 0'
done
run hostalloc-zc hostalloc BENCH_MEM=zerocopy
expect hostalloc-zc "as written" 'cudaHostAlloc 4194304 flags=2'
expect hostalloc-zc "freed as written" 'cudaFreeHost pinned'
reject hostalloc-zc "every free matches its allocation" 'WRONG FREE'

# --- the fork point: one process, three jobs with their own environment ---
printf 'g\t%s\t%s\t30\tBENCH_MEM=gpu\nu\t%s\t%s\t30\tBENCH_MEM=uvm\tBENCH_HOST_SEQS=0\nz\t%s\t%s\t30\tBENCH_MEM=zerocopy\tBENCH_HOST_SEQS=0,1\n' \
	"$tmp/job-g.out" "$tmp/job-g.err" "$tmp/job-u.out" "$tmp/job-u.err" "$tmp/job-z.out" "$tmp/job-z.err" >"$tmp/jobs"
run forked copyin BENCH_JOBS="$tmp/jobs" BENCH_JOBS_RESULT="$tmp/jobs.result" BENCH_GPU_LOCK="$tmp/lock"
rc_is forked 0
reject forked "the parent prints nothing after the fork point" -E 'cudaMalloc|memmode:'
if [ "$(cat "$tmp/jobs.result" 2>/dev/null | awk '{ print $1, $2 }' | tr '\n' ' ')" = "g 0 u 0 z 0 " ]; then
	pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL forked: results"; cat "$tmp/jobs.result"; fi
cat "$tmp/job-g.out" "$tmp/job-g.err" >"$tmp/job-g.all"; cat "$tmp/job-u.out" "$tmp/job-u.err" >"$tmp/job-u.all"
cat "$tmp/job-z.out" "$tmp/job-z.err" >"$tmp/job-z.all"
for j in g u z; do cp "$tmp/job-$j.all" "$tmp/job-$j.out"; done
expect job-g "job g ran in gpu mode" 'memmode: mode=gpu'
count_is job-u '^cudaMallocManaged' 3
count_is job-u 'ReadMostly' 1
count_is job-z '^cudaHostAlloc' 2
# a job past its timeout is killed and reported as 124
printf 'slow\t%s\t%s\t0.2\tBENCH_MEM=gpu\tMOCK_SLEEP_S=5\n' "$tmp/slow.out" "$tmp/slow.err" >"$tmp/jobs2"
run forked2 copyin BENCH_JOBS="$tmp/jobs2" BENCH_JOBS_RESULT="$tmp/jobs2.result"
if awk '$1 == "slow" && $2 == 124 && $3 < 3 { ok = 1 } END { exit !ok }' "$tmp/jobs2.result" 2>/dev/null; then
	pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL forked2: timeout"; cat "$tmp/jobs2.result"; fi

for f in "$tmp"/*.out; do
	if grep -q 'NOT TO A DEVICE' "$f"; then fail=$((fail + 1)); echo "FAIL $(basename "$f"): advice or prefetch not to the GPU"; fi
done
echo "shim_test${MOCK_CUDA13:+ (CUDA 13 signatures)}: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
