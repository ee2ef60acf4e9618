#!/usr/bin/env bash
# The benchmark users would run (issue 18, item 6), one command on the GPU
# machine: every corpus program as it is (data in GPU memory, UVM, zero-copy)
# and ported by bamgen (hbm, host, emu as an SSD; --auto and --auto --opt
# auto), at a size that fits in GPU memory and one that does not fit a
# GPU-memory budget, checksums compared on every row.
#
#   BAMGEN=/path/to/bamgen bench/matrix/run.sh OUTDIR --deadline-s 500 --export DIR
#                                      # full, bounded (build + runs <= ~8.5 min); DIR gets
#                                      # results.csv, summary.txt, matrix.tgz
#   BAMGEN=/path/to/bamgen bench/matrix/run.sh OUTDIR --quick    # a smaller trial
#   bench/matrix/run.sh OUTDIR --dry-run                         # print what would run
#   python3 bench/matrix/plot.py OUTDIR/results.csv docs/benchmarks   # PNG + SVG
#
# More options: python3 bench/matrix/matrix.py --help. Method and what is
# timed: docs/benchmarks.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/matrix.py" "$@"
