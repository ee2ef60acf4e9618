#!/usr/bin/env bash
# Generates every variant of the rewrite benchmark with bamgen, here (no GPU
# needed): build/bench/src/<program>__<variant>.cu. The GPU side
# (bench/rewrites/run.sh) only compiles and runs them.
set -euo pipefail
cd "$(dirname "$0")/../.."
BAMGEN=${BAMGEN:-bin/bamgen}
out=build/bench/src
rm -rf "$out" && mkdir -p "$out"
fail=0
while read -r prog variant args; do
	case "$prog" in ''|'#'*) continue ;; esac
	src=testdata/kernels/$prog/$prog.cu
	dst=$out/${prog}__${variant}.cu
	if [ "$args" = "-" ]; then
		cp "$src" "$dst"
		continue
	fi
	# shellcheck disable=SC2086 # the arguments are words of the table
	if ! $BAMGEN port -q $args -o "$dst" "$src"; then
		echo "prepare: $prog/$variant: bamgen port failed" >&2
		fail=1
	fi
done < "${VARIANTS_FILE:-bench/rewrites/variants.txt}"
ls "$out" | wc -l | xargs echo "prepare: variants generated:"
exit $fail
