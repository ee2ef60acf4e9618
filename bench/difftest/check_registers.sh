#!/usr/bin/env bash
# The register budget of generated kernels (issue 18: every kernel of the
# corpus and goldens at most 64 registers, so every original block size up
# to 1024 threads launches, and no spills). Reads the tables that
# compile_golden.sh and compile_corpus.sh write (header, then
# case, arch, registers, spill stores, spill loads, stack, kernel; tabs)
# and fails, naming each offending kernel, when
#   - a kernel uses more than BUDGET registers (default 64), or
#   - a kernel spills (spill stores or loads > 0 bytes; a stack frame alone
#     is fine: the out-of-line slow path's indirect calls need one).
#
#   bench/difftest/check_registers.sh build/registers-port.txt build/registers-opt.txt ...
#   BUDGET=64 KNOWN=bench/difftest/registers_over_budget.txt bench/difftest/check_registers.sh TABLE...
#   UPDATE=1 bench/difftest/check_registers.sh build/registers-{port,opt,corpus}.txt  # rewrite the list
#
# KNOWN (default: registers_over_budget.txt next to this script; KNOWN= for
# none) lists kernels known to be over the budget, one per line:
#   CASE ARCH KERNEL REGISTERS    (tabs; KERNEL: the name without its
#   parameter list, e.g. "void spmv_csr_vector<double, (int)32>")
# A listed kernel may use up to its listed count and is reported, not
# failed; one that grows past it fails. An entry whose kernel is now within
# the budget and does not spill, or was not compiled, is reported as stale
# (remove the line); STRICT=1 fails on stale entries too. Spills fail
# unless the kernel's entry has a fifth column, SPILL_BYTES (stores plus
# loads allowed; for a kernel a program's own __launch_bounds__ holds below
# the registers it needs: cc's ODT port gets 48). Kernels
# matching SKIP (default: cub:: and thrust:: kernels, which a program gets
# from the libraries it includes) are not checked.
# Exits 0 when every kernel passes, 1 otherwise, 2 on bad input.
set -euo pipefail

BUDGET=${BUDGET:-64}
# Kernels of libraries a program includes are not generated code: skipped.
SKIP=${SKIP-'^(void )?(cub|thrust)::'}
KNOWN=${KNOWN-$(dirname "$0")/registers_over_budget.txt}
[ $# -ge 1 ] || { echo "usage: check_registers.sh TABLE..." >&2; exit 2; }
for t in "$@"; do
	[ -r "$t" ] || { echo "check_registers: cannot read $t" >&2; exit 2; }
done
known=/dev/null
[ -n "$KNOWN" ] && known=$KNOWN

FNAME_AWK='
# The kernel name without its parameter list: up to the "(" that matches
# the final ")" (template arguments may hold parentheses themselves:
# spmv_csr_vector<double, (int)32>(int, ...)).
function fname(k,    i, depth, c) {
	sub(/ +$/, "", k)
	if (substr(k, length(k)) != ")") return k
	depth = 0
	for (i = length(k); i > 0; i--) {
		c = substr(k, i, 1)
		if (c == ")") depth++
		else if (c == "(" && --depth == 0) break
	}
	k = substr(k, 1, i - 1); sub(/ +$/, "", k)
	return k
}
'

# UPDATE=1: rewrite KNOWN from the tables (every kernel over the budget,
# at its highest count over the tables), after a runtime change.
if [ "${UPDATE:-0}" = 1 ]; then
	[ -n "$KNOWN" ] || { echo "check_registers: UPDATE=1 needs KNOWN" >&2; exit 2; }
	{
		printf '# Kernels over the %s-register budget or that spill (issue 18), allowed up to\n' "$BUDGET"
		printf '# the listed count and spill bytes until they are fixed; bench/difftest/check_registers.sh reads it.\n'
		printf '# Written by UPDATE=1 check_registers.sh from the tables of make test-golden-nvcc\n'
		printf '# (nvcc %s). Remove a line when its kernel is within budget (reported as stale).\n' \
			"$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
		printf '# CASE\tARCH\tKERNEL (name without its parameter list)\tREGISTERS[\tSPILL_BYTES]\n'
		awk -F '\t' -v budget="$BUDGET" -v skip="$SKIP" "$FNAME_AWK"'
			FNR == 1 { next }
			skip != "" && $7 ~ skip { next }
			$3 + 0 > budget || $4 + $5 > 0 {
				key = $1 "\t" $2 "\t" fname($7)
				if ($3 + 0 > m[key] + 0) m[key] = $3 + 0
				if ($4 + $5 > sp[key] + 0) sp[key] = $4 + $5
			}
			END { for (k in m) print k "\t" m[k] (sp[k] > 0 ? "\t" sp[k] : "") }' "$@" | LC_ALL=C sort
	} >"$KNOWN.tmp" && mv "$KNOWN.tmp" "$KNOWN"
	echo "check_registers: wrote $KNOWN ($(grep -vc '^#' "$KNOWN") kernels over budget)"
	exit 0
fi
[ -r "$known" ] || { echo "check_registers: cannot read KNOWN=$known" >&2; exit 2; }

awk -F '\t' -v budget="$BUDGET" -v strict="${STRICT:-0}" -v skip="$SKIP" "$FNAME_AWK"'
FNR == 1 && FILENAME != knownfile_path {
	if ($1 != "case" || $3 != "registers") { printf "check_registers: %s: not a register table (header: %s)\n", FILENAME, $0; bad_input = 1; exit 2 }
	next
}
FILENAME == knownfile_path {
	if ($0 ~ /^#/ || $0 ~ /^[ \t]*$/) next
	if ((NF != 4 && NF != 5) || $4 !~ /^[0-9]+$/ || (NF == 5 && $5 !~ /^[0-9]+$/)) { printf "check_registers: %s:%d: want CASE<TAB>ARCH<TAB>KERNEL<TAB>REGISTERS[<TAB>SPILL_BYTES]\n", FILENAME, FNR; bad_input = 1; exit 2 }
	key = $1 SUBSEP $2 SUBSEP $3
	allow[key] = $4; allow_spill[key] = NF == 5 ? $5 : 0; where[key] = FILENAME ":" FNR; order[++nk] = key
	next
}
{
	if (NF < 7 || $3 !~ /^[0-9]+$/) { printf "check_registers: %s:%d: malformed row: %s\n", FILENAME, FNR, $0; bad_input = 1; exit 2 }
	if (skip != "" && $7 ~ skip) next # library kernels (cub, thrust): not generated code
	rows++
	key = $1 SUBSEP $2 SUBSEP fname($7)
	seen[key] = 1
	spill = $4 + $5
	if (spill > max_spill[key] + 0) max_spill[key] = spill
	if (spill > 0 && (key in allow) && spill <= allow_spill[key] + 0) {
		printf "over  %s %s: kernel %s spills (%s bytes stored, %s bytes loaded; known, %s)\n", $1, $2, $7, $4, $5, where[key]
		over++
	} else if (spill > 0) {
		printf "FAIL %s %s: kernel %s spills (%s bytes stored, %s bytes loaded; budget: no spills%s)\n", $1, $2, $7, $4, $5, ((key in allow) && allow_spill[key] > 0 ? sprintf(", known %d", allow_spill[key]) : "")
		fails++
	}
	regs = $3 + 0
	if (key in allow) {
		if (regs > allow[key] + 0) {
			printf "FAIL %s %s: kernel %s uses %d registers, more than its known %d (%s; budget %d)\n", $1, $2, $7, regs, allow[key], where[key], budget
			fails++
		} else if (regs > budget) {
			printf "over  %s %s: kernel %s uses %d registers (budget %d; known, %s)\n", $1, $2, $7, regs, budget, where[key]
			over++
		}
		if (regs > max_known[key] + 0) max_known[key] = regs
	} else if (regs > budget) {
		printf "FAIL %s %s: kernel %s uses %d registers, budget %d\n", $1, $2, $7, regs, budget
		fails++
	}
}
END {
	if (bad_input) exit 2
	for (i = 1; i <= nk; i++) {
		key = order[i]
		split(key, p, SUBSEP)
		if (!(key in seen)) {
			printf "stale %s: known over-budget kernel %s (%s) was not compiled; remove the line\n", where[key], p[3], p[1] " " p[2]
			stale++
		} else if (max_known[key] + 0 <= budget && max_spill[key] + 0 == 0) {
			printf "stale %s: kernel %s (%s) now uses %d registers, within the budget of %d, and does not spill; remove the line\n", where[key], p[3], p[1] " " p[2], max_known[key], budget
			stale++
		}
	}
	printf "registers: %d kernels checked against a budget of %d: %d failing, %d known over budget, %d stale list entries\n", rows, budget, fails + 0, over + 0, stale + 0
	exit (fails > 0 || (strict && stale > 0)) ? 1 : 0
}
' knownfile_path="$known" "$known" "$@"
