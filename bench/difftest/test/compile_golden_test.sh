#!/usr/bin/env bash
# Tests of bench/difftest/compile_golden.sh's one-nvcc-run-per-case mode
# against a fake nvcc (no CUDA needed): the register table of a run that
# compiles sm_80 and sm_90 together equals the tables of one run per arch,
# byte for byte (cub's arch-list namespace included); a case that fails for
# one arch only is reported as passing for the other and failing, with its
# log, for that one; the -rdc=true retry still happens; a case that
# compiles takes one nvcc run, not one per arch.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
compile=$here/../compile_golden.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
	echo "FAIL $*"
	failures=$((failures + 1))
}

# The fake nvcc: -gencode arch=compute_XX,code=sm_XX per arch; for each arch
# it prints ptxas' lines for the kernels the source lists ("// kernel NAME
# REGS80 REGS90"), with cub's namespace named after the arch list as
# cub's util_namespace.cuh does. "// fail sm_90" makes that arch fail;
# "// rdc" fails without -rdc=true as nvcc does. Every run is logged.
cat >"$tmp/nvcc" <<'EOF'
#!/usr/bin/env bash
archs=() src= rdc=0
while [ $# -gt 0 ]; do
	case $1 in
	-gencode) archs+=("$(sed 's/.*code=//' <<<"$2")"); shift ;;
	-rdc=true) rdc=1 ;;
	-c) src=$2; shift ;;
	esac
	shift
done
echo "$(basename "$src") ${archs[*]}" >>"$FAKE_NVCC_CALLS"
list=$(for a in "${archs[@]}"; do printf '%s0_' "${a#*_}"; done)
ns="CUB_101702_${list%_}_NS"
if grep -q '^// rdc' "$src" && [ "$rdc" = 0 ]; then
	echo "ptxas fatal   : Unresolved extern function '_Z3fooi'"
	exit 1
fi
for a in "${archs[@]}"; do
	if grep -q "^// fail $a" "$src"; then
		echo "$src(3): error: identifier \"x\" is undefined in the $a pass"
		exit 1
	fi
done
for a in "${archs[@]}"; do
	while read -r _ _ name r80 r90; do
		regs=$r80
		[ "$a" = sm_90 ] && regs=$r90
		[ "$name" = cub ] && name="_ZN3cub${#ns}${ns}10ScanKernelINS0_5StateEEEvT_"
		echo "ptxas info    : Compiling entry function '$name' for '$a'"
		echo "ptxas info    : Function properties for $name"
		echo "    8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
		echo "ptxas info    : Used $regs registers, 380 bytes cmem[0]"
	done < <(grep '^// kernel ' "$src")
done
EOF
chmod +x "$tmp/nvcc"

mkdir -p "$tmp/src"
printf '// kernel _Z4walkPi 40 48\n// kernel cub 12 14\n// kernel _Z4stepv 70 72\n' >"$tmp/src/good.cu"
printf '// kernel _Z3onev 20 22\n// fail sm_90\n' >"$tmp/src/bad90.cu"
printf '// rdc\n// kernel _Z6parentPi 30 31\n' >"$tmp/src/needs_rdc.cu"

run() { # TAG ARCHS CASES
	FAKE_NVCC_CALLS="$tmp/$1.calls" NVCC="$tmp/nvcc" ARCHS=$2 CASES=$3 SRC_DIR="$tmp/src" \
		OUT="$tmp/$1" REGISTERS="$tmp/$1.txt" JOBS=2 bash "$compile" >"$tmp/$1.out" 2>&1
	echo $? >"$tmp/$1.rc"
}
export FAKE_NVCC_CALLS=$tmp/calls

# Cases that compile: one run per case, the table of separate runs.
run both "sm_80 sm_90" '[gn]*'
run only80 sm_80 '[gn]*'
run only90 sm_90 '[gn]*'
[ "$(cat "$tmp/both.rc")" = 0 ] || fail "good cases: exit $(cat "$tmp/both.rc"), want 0: $(cat "$tmp/both.out")"
calls=$(grep -c '^good.cu ' "$tmp/both.calls")
[ "$calls" = 1 ] || fail "good: $calls nvcc runs for two archs, want 1"
sep=$(
	head -1 "$tmp/only80.txt"
	tail -n +2 -q "$tmp/only80.txt" "$tmp/only90.txt" | sort -t $'\t' -k1,1 -k2,2 -k7,7
)
if [ "$(cat "$tmp/both.txt")" != "$sep" ]; then
	fail "one run for both archs gives another table than a run per arch:"
	diff <(echo "$sep") "$tmp/both.txt"
fi
grep -q 'CUB_101702_800_NS' "$tmp/both.txt" && grep -q 'CUB_101702_900_NS' "$tmp/both.txt" ||
	fail "cub's namespace not named per arch: $(grep -i cub "$tmp/both.txt")"
rows=$(($(wc -l <"$tmp/both.txt") - 1))
[ "$rows" = 8 ] || fail "good + needs_rdc: $rows rows, want 8"
for want in "ok   good sm_80" "ok   good sm_90" "ok   needs_rdc sm_80" "ok   needs_rdc sm_90" "4 passed, 0 failed"; do
	grep -qx "$want" "$tmp/both.out" || fail "missing line \"$want\" in: $(cat "$tmp/both.out")"
done
grep -q '^needs_rdc.cu sm_80 sm_90$' "$tmp/both.calls" || fail "needs_rdc: no -rdc retry of both archs: $(cat "$tmp/both.calls")"

# A case failing for sm_90 only: sm_80 passes, sm_90 fails with its log.
run bad "sm_80 sm_90" bad90
[ "$(cat "$tmp/bad.rc")" = 1 ] || fail "bad90: exit $(cat "$tmp/bad.rc"), want 1"
grep -qx 'ok   bad90 sm_80' "$tmp/bad.out" || fail "bad90 sm_80 not reported as passing: $(cat "$tmp/bad.out")"
grep -qx "FAIL bad90 sm_90 (log: $tmp/bad/bad90.sm_90.log)" "$tmp/bad.out" ||
	fail "bad90 sm_90 not reported as failing with its log: $(cat "$tmp/bad.out")"
grep -q 'error: identifier "x" is undefined in the sm_90 pass' "$tmp/bad.out" ||
	fail "bad90: the error is not shown: $(cat "$tmp/bad.out")"
grep -q 'undefined in the sm_90 pass' "$tmp/bad/bad90.sm_90.log" 2>/dev/null || fail "bad90: log of sm_90 missing"
[ ! -e "$tmp/bad/bad90.sm_80.log" ] || fail "bad90: a log is kept for sm_80, which passed"
grep -qx '1 passed, 1 failed' "$tmp/bad.out" || fail "bad90: counts wrong: $(cat "$tmp/bad.out")"
grep -q "bad90	sm_80	20	" "$tmp/bad.txt" || fail "bad90: sm_80's row missing: $(cat "$tmp/bad.txt")"

if [ "$failures" -gt 0 ]; then
	echo "compile_golden_test: $failures failed"
	exit 1
fi
echo "compile_golden_test: all passed"
