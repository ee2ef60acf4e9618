#!/usr/bin/env bash
# Compile every ported program of the whole-program goldens
# (testdata/program/*.txtar) with nvcc against the bundled runtime headers,
# then link each program's objects (against libbam.a when LIBBAM is set;
# otherwise only kernel symbols must resolve: a prototype and a definition
# that disagree after a port leave the kernel undefined). PTX only
# (compute_80): no GPU, no ptxas.
#
#   bench/difftest/compile_program_golden.sh
#   LIBBAM=runtime/cuda/build/libbam.a bench/difftest/compile_program_golden.sh
#
# A case that holds several programs (files with their own main) is
# compiled, not linked; so is a case whose port changes nothing (its files
# are the originals). Prints one line per case; exits 1 on any failure.
# Cases are checked JOBS at a time (default: the number of cores).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NVCC=${NVCC:-nvcc}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bamgen-program.XXXXXX")}
LIBBAM=${LIBBAM:-}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
TARGET="-gencode arch=compute_80,code=compute_80"

command -v "$NVCC" >/dev/null || { echo "compile_program_golden: nvcc not found" >&2; exit 2; }
if ! (cd "$ROOT" && BAMGEN_PROGRAM_OUT="$OUT" go test ./transform -run '^TestProgramGolden$' -count=1 >/dev/null); then
	echo "compile_program_golden: go test ./transform -run TestProgramGolden failed; fix the goldens first" >&2
	exit 1
fi
# One case: its files compiled, then linked. Prints "ok" or "FAIL" lines.
check_case() { # DIR
	local dir=$1 c defs objs ok f o mains kern
	c=$(basename "$dir")
	# -D lines of the case apply to every file, as in the golden test.
	defs=$(sed -n '/^-- defines --$/,/^-- /p' "$ROOT/testdata/program/$c.txtar" | grep -v '^-- ' | sed 's/^/-D/' | tr '\n' ' ')
	objs=()
	ok=1
	while IFS= read -r f; do
		o="$dir/$(echo "${f%.cu}" | tr / _).o"
		if "$NVCC" -std=c++17 $TARGET $defs -I"$dir" -I"$ROOT/runtime/cuda/include" -c "$dir/$f" -o "$o" >"$o.log" 2>&1; then
			objs+=("$o")
		else
			echo "FAIL $c: $f: $(grep -m1 error "$o.log")"
			ok=0
		fi
	done < <(cd "$dir" && find . -name '*.cu' | sed 's|^\./||' | sort)
	[ "$ok" = 1 ] || return
	# Nothing ported (a refusal case): the files are the originals, whose
	# link is the case's own business (duplicate_kernel does not link).
	if [ -z "$(sed -n '/^-- output.diff --$/,/^-- diagnostics --$/p' "$ROOT/testdata/program/$c.txtar" | grep -v '^-- ')" ]; then
		echo "ok   $c (unchanged; compiles)"
		return
	fi
	mains=$(grep -l '^int main' $(cd "$dir" && find "$dir" -name '*.cu') | wc -l)
	if [ "$mains" != 1 ]; then
		echo "ok   $c (compiles; $mains programs, not linked)"
		return
	fi
	if [ -n "$LIBBAM" ]; then
		"$NVCC" $TARGET "${objs[@]}" "$LIBBAM" -lpthread -o "$dir/prog" >"$dir/link.log" 2>&1 || { echo "FAIL $c: link: $(grep -m1 -E 'undefined|error' "$dir/link.log")"; return; }
	else
		"$NVCC" $TARGET "${objs[@]}" -o "$dir/prog" >"$dir/link.log" 2>&1
		kern=$(grep -E 'undefined reference to `' "$dir/link.log" | grep -v 'bam::' | sed -n 's/.*undefined reference to `\([^(]*\).*/\1/p' | sort -u | tr '\n' ' ')
		[ -z "$kern" ] || { echo "FAIL $c: link: undefined $kern"; return; }
	fi
	echo "ok   $c (compiles and links)"
}
export -f check_case
export NVCC TARGET ROOT LIBBAM

# Cases in parallel (JOBS at a time; nvcc runs one process at a time), each
# case's lines printed together, in case order.
# A case passes when it printed an "ok" line and no "FAIL" line.
for dir in "$OUT"/*/; do printf '%s\n' "$dir"; done |
	xargs -P "$JOBS" -I{} bash -c 'check_case "$1" >"${1%/}.result" 2>&1' _ {}
bad=0
for dir in "$OUT"/*/; do
	r=${dir%/}.result
	cat "$r"
	if grep -q '^FAIL ' "$r" || ! grep -q '^ok ' "$r"; then
		grep -q '^FAIL ' "$r" || echo "FAIL $(basename "$dir"): no result"
		bad=1
	fi
done
echo "outputs and logs: $OUT"
exit $bad
