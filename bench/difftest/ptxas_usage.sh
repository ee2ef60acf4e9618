#!/usr/bin/env bash
# Turns the `-Xptxas -v` output of one nvcc run into table rows, one per
# kernel: CASE ARCH REGISTERS SPILL_STORES SPILL_LOADS STACK KERNEL
# (bytes for spills and stack; kernel names demangled when cu++filt is there).
# cub's EmptyKernel, which every file including thrust/cub carries, is left out.
#
#   ptxas_usage.sh CASE < nvcc.log >> registers.txt
set -euo pipefail
name=$1
demangle=cat
command -v cu++filt >/dev/null && demangle=cu++filt
awk -v name="$name" '
	/Compiling entry function/ {
		fn = $0; sub(/.*entry function \047/, "", fn); sub(/\047.*/, "", fn)
		arch = $0; sub(/.*for \047/, "", arch); sub(/\047.*/, "", arch)
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
