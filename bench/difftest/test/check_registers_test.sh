#!/usr/bin/env bash
# Tests of bench/difftest/check_registers.sh on hand-made register tables:
# a 65-register kernel, a spill, known over-budget kernels (allowed up to
# their count, failing above it or once back within the budget) and bad
# input. No nvcc needed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
check=$here/../check_registers.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
hdr=$'case\tarch\tregisters\tspill_stores\tspill_loads\tstack\tkernel'

table() { # FILE ROWS... (each row: case arch regs st ld stack kernel, separated by |)
	local f=$1
	shift
	{
		echo "$hdr"
		for r in "$@"; do tr '|' '\t' <<<"$r"; done
	} >"$f"
}

expect() { # NAME WANT_RC WANT_TEXT CMD...
	local name=$1 want=$2 text=$3
	shift 3
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" != "$want" ]; then
		echo "FAIL $name: exit $rc, want $want; output:"
		sed 's/^/    /' <<<"$out"
		failures=$((failures + 1))
	elif [ -n "$text" ] && ! grep -qF -- "$text" <<<"$out"; then
		echo "FAIL $name: output lacks \"$text\"; output:"
		sed 's/^/    /' <<<"$out"
		failures=$((failures + 1))
	else
		echo "ok   $name"
	fi
}

table "$tmp/ok.txt" "vec|sm_80|40|0|0|8|add(float *, int)" "vec|sm_90|64|0|0|8|add(float *, int)"
expect "within budget" 0 "2 kernels checked against a budget of 64: 0 failing" env KNOWN= "$check" "$tmp/ok.txt"

table "$tmp/65.txt" "vec|sm_80|40|0|0|8|add(float *, int)" "odt|sm_90|65|0|0|32|walk(bam::v1::array<const unsigned int>, int)"
expect "65 registers fail" 1 "FAIL odt sm_90: kernel walk(bam::v1::array<const unsigned int>, int) uses 65 registers, budget 64" env KNOWN= "$check" "$tmp/65.txt"
expect "several tables, one bad" 1 "4 kernels checked" env KNOWN= "$check" "$tmp/65.txt" "$tmp/ok.txt" <(head -1 "$tmp/ok.txt")
expect "budget is a parameter" 0 "" env KNOWN= BUDGET=65 "$check" "$tmp/65.txt"

table "$tmp/spill.txt" "vec|sm_80|40|8|8|16|add(float *, int)"
expect "spills fail" 1 "kernel add(float *, int) spills (8 bytes stored, 8 bytes loaded" env KNOWN= "$check" "$tmp/spill.txt"
table "$tmp/stack.txt" "vec|sm_80|40|0|0|2048|add(float *, int)"
expect "stack alone is fine" 0 "" env KNOWN= "$check" "$tmp/stack.txt"

printf '# comment\nodt\tsm_90\twalk\t70\n' >"$tmp/known.txt"
expect "known kernel within its count" 0 "over  odt sm_90: kernel walk(bam::v1::array<const unsigned int>, int) uses 65 registers (budget 64; known" \
	env KNOWN="$tmp/known.txt" "$check" "$tmp/65.txt"
printf 'odt\tsm_90\twalk\t64\n' >"$tmp/known64.txt"
expect "known kernel grown past its count" 1 "uses 65 registers, more than its known 64" env KNOWN="$tmp/known64.txt" "$check" "$tmp/65.txt"
table "$tmp/fixed.txt" "odt|sm_90|60|0|0|32|walk(bam::v1::array<const unsigned int>, int)"
expect "known kernel back within budget" 0 "stale $tmp/known.txt:2: kernel walk (odt sm_90) now uses 60 registers, within the budget of 64, and does not spill; remove the line" env KNOWN="$tmp/known.txt" "$check" "$tmp/fixed.txt"
expect "stale entries fail when strict" 1 "1 stale list entries" env STRICT=1 KNOWN="$tmp/known.txt" "$check" "$tmp/fixed.txt"
expect "known kernel not compiled" 0 "was not compiled; remove the line" env KNOWN="$tmp/known.txt" "$check" "$tmp/ok.txt"
table "$tmp/cub.txt" "prog|sm_80|80|0|0|0|void cub::CUB_101702_800_NS::DeviceReduceSingleTileKernel<int>(int *)"
expect "library kernels are skipped" 0 "0 kernels checked" env KNOWN= "$check" "$tmp/cub.txt"
expect "unless SKIP is empty" 1 "uses 80 registers, budget 64" env KNOWN= SKIP= "$check" "$tmp/cub.txt"
table "$tmp/spillknown.txt" "odt|sm_90|65|4|4|32|walk(bam::v1::array<const unsigned int>, int)"
expect "known kernel may not spill" 1 "spills" env KNOWN="$tmp/known.txt" "$check" "$tmp/spillknown.txt"
# A known spill (fifth column: bytes stored plus loaded) is allowed up to
# its count, fails above it, and keeps an entry under the budget from going
# stale while the kernel spills.
printf 'odt\tsm_90\twalk\t65\t8\n' >"$tmp/knownspill.txt"
expect "known spill within its bytes" 0 "over  odt sm_90: kernel walk(bam::v1::array<const unsigned int>, int) spills (4 bytes stored, 4 bytes loaded; known" \
	env KNOWN="$tmp/knownspill.txt" "$check" "$tmp/spillknown.txt"
table "$tmp/spillmore.txt" "odt|sm_90|65|8|4|32|walk(bam::v1::array<const unsigned int>, int)"
expect "known spill grown past its bytes" 1 "budget: no spills, known 8)" env KNOWN="$tmp/knownspill.txt" "$check" "$tmp/spillmore.txt"
table "$tmp/spill48.txt" "cc|sm_80|48|4|4|32|walk(bam::v1::array<const unsigned int>, int)"
printf 'cc\tsm_80\twalk\t48\t8\n' >"$tmp/known48.txt"
expect "a spilling kernel under the budget is not stale" 0 "0 stale list entries" env STRICT=1 KNOWN="$tmp/known48.txt" "$check" "$tmp/spill48.txt"
table "$tmp/nospill48.txt" "cc|sm_80|48|0|0|32|walk(bam::v1::array<const unsigned int>, int)"
expect "nor spilling any more: stale" 1 "and does not spill; remove the line" env STRICT=1 KNOWN="$tmp/known48.txt" "$check" "$tmp/nospill48.txt"
printf 'cc\tsm_80\twalk\t48\tx\n' >"$tmp/knownbad.txt"
expect "a bad spill column is bad input" 2 "REGISTERS[<TAB>SPILL_BYTES]" env KNOWN="$tmp/knownbad.txt" "$check" "$tmp/spill48.txt"

# Template arguments with parentheses: two instantiations, one listed.
table "$tmp/tmpl.txt" "spmv|sm_80|66|0|0|8|void spmv_csr_vector<double, (int)32>(int, bam::v1::array<const int>)" \
	"spmv|sm_80|70|0|0|8|void spmv_csr_vector<double, (int)4>(int, bam::v1::array<const int>)"
printf 'spmv\tsm_80\tvoid spmv_csr_vector<double, (int)32>\t66\n' >"$tmp/tmplknown.txt"
expect "instantiations are told apart" 1 "FAIL spmv sm_80: kernel void spmv_csr_vector<double, (int)4>(int, bam::v1::array<const int>) uses 70 registers, budget 64" \
	env KNOWN="$tmp/tmplknown.txt" "$check" "$tmp/tmpl.txt"

# UPDATE=1 writes the list from the tables; the check then passes on them.
expect "update writes the list" 0 "1 kernels over budget" env UPDATE=1 KNOWN="$tmp/written.txt" "$check" "$tmp/65.txt" "$tmp/ok.txt"
expect "written list holds the kernel" 0 "" grep -qP '^odt\tsm_90\twalk\t65$' "$tmp/written.txt"
expect "check passes with the written list" 0 "1 known over budget" env KNOWN="$tmp/written.txt" "$check" "$tmp/65.txt" "$tmp/ok.txt"
expect "update lists a spilling kernel with its bytes" 0 "" env UPDATE=1 KNOWN="$tmp/written2.txt" "$check" "$tmp/spill48.txt" "$tmp/ok.txt"
expect "written spill entry" 0 "" grep -qP '^cc\tsm_80\twalk\t48\t8$' "$tmp/written2.txt"
expect "check passes with it" 0 "1 known over budget" env STRICT=1 KNOWN="$tmp/written2.txt" "$check" "$tmp/spill48.txt" "$tmp/ok.txt"

echo "not a table" >"$tmp/junk.txt"
expect "not a table" 2 "not a register table" env KNOWN= "$check" "$tmp/junk.txt"
printf 'odt\tsm_90\twalk\n' >"$tmp/badknown.txt"
expect "malformed known list" 2 "want CASE<TAB>ARCH<TAB>KERNEL<TAB>REGISTERS" env KNOWN="$tmp/badknown.txt" "$check" "$tmp/ok.txt"
expect "missing table" 2 "cannot read" env KNOWN= "$check" "$tmp/none.txt"

# The list in the repository parses (its kernels are not in ok.txt, so
# every entry is stale; bad syntax would exit 2).
STRICT=1 "$check" "$tmp/ok.txt" >"$tmp/repo.out" 2>&1
rc=$?
if [ "$rc" = 2 ] || { [ "$rc" = 1 ] && ! grep -q "was not compiled" "$tmp/repo.out"; }; then
	echo "FAIL repository list: exit $rc"
	sed 's/^/    /' "$tmp/repo.out"
	failures=$((failures + 1))
else
	echo "ok   repository list parses"
fi

[ "$failures" -eq 0 ] && echo "check_registers_test: all passed" || { echo "check_registers_test: $failures failed"; exit 1; }
