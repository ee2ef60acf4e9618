#!/usr/bin/env bash
# Port the corpus programs written for issue 17 as a user would -- one
# command over the program's directory, `bamgen port --auto [--opt auto] -w DIR`
# on a copy, which ports its files as one program (docs/port.md, "Whole
# programs") -- then compile every file of the result with nvcc and link the
# objects. Records what bamgen does with each program today
# (docs/realworld.md, "Corpus programs").
#
#   tools/realworld/port_corpus.sh                        # bin/bamgen, all four
#   BAMGEN=/tmp/bamgen-main PROGS="bfs_multi" tools/realworld/port_corpus.sh
#   LIBBAM=runtime/cuda/build/libbam.a tools/realworld/port_corpus.sh   # full link
#
# Without LIBBAM the link step only checks that no kernel symbol is left
# undefined (a prototype and its definition that disagree after a port);
# undefined bam:: runtime symbols are expected then and ignored.
# Per program and mode it prints: bamgen's exit status, the files it changed,
# the error/warning counts, and "compiles"/"FAILS" per file and for the link.
# Exit status 1 when any output that bamgen accepted (exit 0) does not build.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NVCC=${NVCC:-nvcc}
BAMGEN=${BAMGEN:-$ROOT/bin/bamgen}
PROGS=${PROGS:-"bfs_modes bfs_multi kernel_only host_idioms"}
MODES=${MODES:-"auto opt"}
# PTX only (all front ends and cicc, no ptxas): the errors a port can cause
# show up there, at half the time.
TARGET=${TARGET:-"-gencode arch=compute_80,code=compute_80"}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bamgen-portcorpus.XXXXXX")}
LIBBAM=${LIBBAM:-}

[ -x "$BAMGEN" ] || { echo "port_corpus: $BAMGEN not found (make build, or set BAMGEN)" >&2; exit 2; }
command -v "$NVCC" >/dev/null || { echo "port_corpus: nvcc not found" >&2; exit 2; }

bad=0
for prog in $PROGS; do
	for mode in $MODES; do
		dir=$OUT/$prog.$mode
		rm -rf "$dir" && mkdir -p "$dir"
		cp -r "$ROOT/testdata/kernels/$prog/." "$dir/"
		flags=(--auto)
		[ "$mode" = opt ] && flags+=(--opt auto)
		files=$(cd "$dir" && ls *.cu *.cuh *.h 2>/dev/null | tr '\n' ' ')
		before=$(cd "$dir" && md5sum $files)
		"$BAMGEN" port "${flags[@]}" -w "$dir" >"$dir/port.log" 2>&1
		rc=$?
		changed=$(cd "$dir" && md5sum $files | diff <(echo "$before") - | sed -n 's/^> [0-9a-f]*  //p' | tr '\n' ' ')
		nerr=$(grep -c ': error:' "$dir/port.log")
		nwarn=$(grep -c ': warning:' "$dir/port.log")
		printf '%-12s %-4s bamgen exit %d, changed: %s(%d errors, %d warnings)\n' "$prog" "$mode" "$rc" "${changed:-none }" "$nerr" "$nwarn"
		objs=()
		build_ok=1
		for f in $(cd "$dir" && ls *.cu); do
			if (cd "$dir" && "$NVCC" -std=c++17 $TARGET -I"$ROOT/runtime/cuda/include" -c "$f" -o "${f%.cu}.o") >"$dir/$f.nvcc.log" 2>&1; then
				echo "    compiles  $f"
				objs+=("${f%.cu}.o")
			else
				echo "    FAILS     $f: $(grep -m1 -E 'error' "$dir/$f.nvcc.log")"
				build_ok=0
			fi
		done
		if [ "$build_ok" = 1 ]; then
			if [ -n "$LIBBAM" ]; then
				if (cd "$dir" && "$NVCC" $TARGET "${objs[@]}" "$LIBBAM" -lpthread -o prog) >"$dir/link.log" 2>&1; then
					echo "    links"
				else
					echo "    FAILS     link: $(grep -m1 -E 'undefined|error' "$dir/link.log")"
					build_ok=0
				fi
			else
				(cd "$dir" && "$NVCC" $TARGET "${objs[@]}" -o prog) >"$dir/link.log" 2>&1
				kern=$(grep -E 'undefined reference to `' "$dir/link.log" | grep -v 'bam::' | sed -n 's/.*undefined reference to `\([^(]*\).*/\1/p' | sort -u | tr '\n' ' ')
				if [ -n "$kern" ]; then
					echo "    FAILS     link: undefined $kern"
					build_ok=0
				else
					echo "    links (kernel symbols; bam:: runtime not linked, set LIBBAM)"
				fi
			fi
		fi
		if [ "$rc" = 0 ] && [ "$build_ok" = 0 ]; then
			echo "    SILENT BREAKAGE: bamgen exited 0, the program does not build"
			bad=1
		fi
	done
done
echo "outputs and logs: $OUT"
exit $bad
