#!/usr/bin/env bash
# Turns the `-Xptxas -v` output of one nvcc run into table rows, one per
# kernel: CASE ARCH REGISTERS SPILL_STORES SPILL_LOADS STACK KERNEL
# (bytes for spills and stack; kernel names demangled when cu++filt is there).
# cub's EmptyKernel, which every file including thrust/cub carries, is left out.
# One nvcc run may compile several archs (-gencode per arch): ptxas names the
# arch of each kernel, so the rows come out per arch. cub puts its kernels in
# a namespace named after the run's arch list (cub::CUB_101702_800_900_NS for
# sm_80 and sm_90 together); each row names it as a run for its arch alone
# does (cub::CUB_101702_800_NS), so the rows do not depend on how the archs
# were grouped into runs.
#
#   ptxas_usage.sh CASE < nvcc.log >> registers.txt
set -euo pipefail
name=$1
demangle=cat
command -v cu++filt >/dev/null && demangle=cu++filt
awk -v name="$name" '
	# FN (mangled) with every cub magic namespace <len>CUB_<ver>_<a>_<b>..._NS
	# of several archs renamed to the one of ARCH (sm_80: 800), its length
	# prefix fixed. Unchanged when ARCH is not in the list.
	function onearch(fn, arch,    out, m, p, digits, id, n, parts, i, want, nid, L) {
		want = arch; sub(/^sm_/, "", want); sub(/[^0-9].*/, "", want); want = want "0"
		out = ""
		while (match(fn, /[0-9]+CUB_[0-9]+(_[0-9]+)+_NS/)) {
			m = substr(fn, RSTART, RLENGTH)
			p = index(m, "CUB_"); digits = substr(m, 1, p - 1); id = substr(m, p)
			L = length(id) ""
			n = split(id, parts, "_")
			nid = ""
			if (n > 4 && substr(digits, length(digits) - length(L) + 1) == L)
				for (i = 3; i < n; i++) if (parts[i] == want) nid = "CUB_" parts[2] "_" want "_NS"
			if (nid != "") m = substr(digits, 1, length(digits) - length(L)) length(nid) nid
			out = out substr(fn, 1, RSTART - 1) m
			fn = substr(fn, RSTART + RLENGTH)
		}
		return out fn
	}
	/Compiling entry function/ {
		fn = $0; sub(/.*entry function \047/, "", fn); sub(/\047.*/, "", fn)
		arch = $0; sub(/.*for \047/, "", arch); sub(/\047.*/, "", arch)
		fn = onearch(fn, arch)
		stack = 0; st = 0; ld = 0; entry = 1; next
	}
	entry && /bytes stack frame/ {
		for (i = 1; i <= NF; i++) {
			if ($(i+1) == "bytes" && $(i+2) == "stack") stack = $i
			if ($(i+1) == "bytes" && $(i+2) == "spill" && $(i+3) ~ /^stores/) st = $i
			if ($(i+1) == "bytes" && $(i+2) == "spill" && $(i+3) ~ /^loads/) ld = $i
		}
		next
	}
	entry && /Used [0-9]+ registers/ {
		regs = $0; sub(/.*Used /, "", regs); sub(/ registers.*/, "", regs)
		if (fn !~ /EmptyKernel/) printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, arch, regs, st, ld, stack, fn
		entry = 0
	}
' | while IFS=$'\t' read -r c a r s l k fn; do
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$a" "$r" "$s" "$l" "$k" "$(printf '%s\n' "$fn" | $demangle)"
done
