#!/usr/bin/env bash
# Alternated A/B runs of compiled parse test binaries, so that every binary
# sees the same load on a shared machine; prints each binary's median.
#
#   go test -c -o build/ab/old.test ./parse     (one binary per variant)
#   bench/parse/ab.sh ROUNDS BENCHTIME build/ab/old.test build/ab/new.test ...
#
# Each round runs every binary once, in order:
#   BIN -test.run '^$' -test.bench '^BenchmarkParse$' -test.benchtime BENCHTIMEx -test.cpu 1
# from parse/ (the benchmark reads the corpus relative to it). BENCH=Lex
# measures BenchmarkLex instead. Raw ns/op lines go to $AB_OUT (default
# build/ab/ab.out).
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 ROUNDS BENCHTIME BIN..." >&2
  exit 2
fi
rounds=$1 benchtime=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
bench=${BENCH:-Parse}
out=${AB_OUT:-$root/build/ab/ab.out}
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out") # the runs happen in parse/
bins=()
for b in "$@"; do bins+=("$(cd "$(dirname "$b")" && pwd)/$(basename "$b")"); done
: >"$out"
cd "$root/parse"
for ((r = 1; r <= rounds; r++)); do
  for b in "${bins[@]}"; do
    "$b" -test.run '^$' -test.bench "^Benchmark${bench}\$" -test.benchtime "${benchtime}x" -test.cpu 1 |
      awk -v b="$(basename "$b")" '$1 ~ /^Benchmark/ {print b, $3, $5}' >>"$out"
  done
done
for b in "${bins[@]}"; do
  name=$(basename "$b")
  awk -v b="$name" '$1 == b {print $2, $3}' "$out" | sort -n |
    awk -v b="$name" '{ns[NR] = $1; mb[NR] = $2} END {
      m = int((NR + 1) / 2)
      printf "%-24s median %.1f ms = %s MB/s (min %.1f ms, max %.1f ms, %d runs)\n", b, ns[m] / 1e6, mb[m], ns[1] / 1e6, ns[NR] / 1e6, NR }'
done
