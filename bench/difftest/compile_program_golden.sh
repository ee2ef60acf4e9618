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
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NVCC=${NVCC:-nvcc}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bamgen-program.XXXXXX")}
LIBBAM=${LIBBAM:-}
TARGET="-gencode arch=compute_80,code=compute_80"

command -v "$NVCC" >/dev/null || { echo "compile_program_golden: nvcc not found" >&2; exit 2; }
if ! (cd "$ROOT" && BAMGEN_PROGRAM_OUT="$OUT" go test ./transform -run '^TestProgramGolden$' -count=1 >/dev/null); then
	echo "compile_program_golden: go test ./transform -run TestProgramGolden failed; fix the goldens first" >&2
	exit 1
fi
bad=0
for dir in "$OUT"/*/; do
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
	[ "$ok" = 1 ] || { bad=1; continue; }
	# Nothing ported (a refusal case): the files are the originals, whose
	# link is the case's own business (duplicate_kernel does not link).
	if [ -z "$(sed -n '/^-- output.diff --$/,/^-- diagnostics --$/p' "$ROOT/testdata/program/$c.txtar" | grep -v '^-- ')" ]; then
		echo "ok   $c (unchanged; compiles)"
		continue
	fi
	mains=$(grep -l '^int main' $(cd "$dir" && find "$dir" -name '*.cu') | wc -l)
	if [ "$mains" != 1 ]; then
		echo "ok   $c (compiles; $mains programs, not linked)"
		continue
	fi
	if [ -n "$LIBBAM" ]; then
		"$NVCC" $TARGET "${objs[@]}" "$LIBBAM" -lpthread -o "$dir/prog" >"$dir/link.log" 2>&1 || { echo "FAIL $c: link: $(grep -m1 -E 'undefined|error' "$dir/link.log")"; bad=1; continue; }
	else
		"$NVCC" $TARGET "${objs[@]}" -o "$dir/prog" >"$dir/link.log" 2>&1
		kern=$(grep -E 'undefined reference to `' "$dir/link.log" | grep -v 'bam::' | sed -n 's/.*undefined reference to `\([^(]*\).*/\1/p' | sort -u | tr '\n' ' ')
		[ -z "$kern" ] || { echo "FAIL $c: link: undefined $kern"; bad=1; continue; }
	fi
	echo "ok   $c (compiles and links)"
done
echo "outputs and logs: $OUT"
exit $bad
