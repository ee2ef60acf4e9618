#!/usr/bin/env bash
# Registers and spills of ported kernels (issue 18, item 3): each corpus
# program ported with `bamgen port --auto --opt auto` (and without --opt),
# compiled with ptxas for each architecture against the runtime headers in
# INC (default: this tree's), no -maxrregcount. Prints one TSV row per
# kernel: program, variant, arch, kernel, registers, spill bytes (stores +
# loads, the kernel's own frame), stack frame bytes. No GPU needed.
#
#   bench/hitpath/regs.sh > regs.tsv
#   INC=/other/tree/runtime/cuda/include ARCHS=sm_90 bench/hitpath/regs.sh
#   PROGRAMS="bfs_warp cc" bench/hitpath/regs.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
INC=${INC:-$ROOT/runtime/cuda/include}
ARCHS=${ARCHS:-"sm_80 sm_90"}
JOBS=${JOBS:-2}
PROGRAMS=${PROGRAMS:-$(cd "$ROOT/testdata/kernels" && ls -d */ | tr -d / | grep -v -e '^stress$')}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bam-regs.XXXXXX")
(cd "$ROOT" && go build -o "$WORK/bamgen" ./cmd/bamgen)

for p in $PROGRAMS; do
	src="$ROOT/testdata/kernels/$p/$p.cu"
	[ -f "$src" ] || continue
	"$WORK/bamgen" port --auto "$src" > "$WORK/$p.port.cu" 2>/dev/null || cp "$src" "$WORK/$p.port.cu"
	"$WORK/bamgen" port --auto --opt auto "$src" > "$WORK/$p.opt.cu" 2>/dev/null || cp "$src" "$WORK/$p.opt.cu"
done

one() { # FILE ARCH
	local f=$1 arch=$2 base
	base=$(basename "$f" .cu)
	# -I the program's own directory: its local headers (bfs_modes).
	if "$NVCC" -std=c++17 -O3 -arch="$arch" -Xptxas -v -I"$INC" -I"$ROOT/testdata/kernels/${base%%.*}" \
		-c "$f" -o "$f.$arch.o" 2> "$f.$arch.log"; then
		# ptxas -v: "Compiling entry function 'K'", then its stack/spill line and
		# "Used N registers"; callee (non-entry) properties lines are skipped.
		awk -v p="${base%%.*}" -v v="${base#*.}" -v a="$arch" -F"'" '
			/Compiling entry function/ { fn = $2; want = 1; next }
			want && /bytes stack frame/ { split($0, w, " "); st = w[1]; sp = w[5] + w[9]; next }
			want && /Used [0-9]+ registers/ { split($0, w, "Used "); split(w[2], x, " "); r = x[1];
				if (fn !~ /EmptyKernel/) printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p, v, a, fn, r, sp, st; want = 0 }
' "$f.$arch.log"
	else
		printf '%s\t%s\t%s\tCOMPILE-FAILED\t-\t-\t-\n' "${base%%.*}" "${base#*.}" "$arch"
	fi
}
export -f one
export NVCC INC ROOT
printf 'program\tvariant\tarch\tkernel\tregisters\tspill_bytes\tstack\n'
for f in "$WORK"/*.cu; do for a in $ARCHS; do echo "$f $a"; done; done |
	xargs -P "$JOBS" -L 1 bash -c 'one $0 $1' | sort
