#!/usr/bin/env bash
# Instructions per op of BenchmarkParse (or BenchmarkLex) under callgrind:
# (I(3 ops) - I(1 op)) / 3, so that setup and the corpus read cancel out.
# Wall time on a shared VM varies by +-25%; instruction counts repeat within
# ~1 M (heap-profile sampling walks the parser's stack at random points;
# MEMPROF=0 turns that off and repeats within ~0.2 M).
#
#   bench/parse/callgrind.sh [Parse|Lex]           (needs valgrind)
#   MEMPROF=0 bench/parse/callgrind.sh Parse
set -euo pipefail
which=${1:-Parse}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(mktemp /tmp/parse-cg.XXXXXX)
trap 'rm -f "$bin"' EXIT
(cd "$root/parse" && go test -c -o "$bin" .)
godebug=asyncpreemptoff=1
if [ "${MEMPROF:-}" = 0 ]; then godebug=$godebug,memprofilerate=0; fi
count() {
  (cd "$root/parse" && GOGC=off GODEBUG=$godebug valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$bin" -test.run '^$' -test.bench "^Benchmark${which}\$" -test.benchtime "$1" -test.cpu 1 2>&1 |
    awk '/Collected/ {print $4}')
}
one=$(count 1x)
three=$(count 3x)
echo "$which: $(((three - one) / 3)) instructions per op"
