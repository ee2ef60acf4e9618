#!/usr/bin/env bash
# Bytes and requests per BFS, old vs new line size and replacement (issue
# 18, item 4), on the GPU machine. One command from the repository root:
#
#   bench/lines/run.sh [OUT] [SCALE]       # default OUT=build/bench-lines, SCALE=22
#
# Builds libbam and bench/lines/bfs_lines.cu for ARCH (default sm_90), runs
# every configuration of bfs_lines (graph: R-MAT, 2^SCALE vertices, 8-byte
# edges; cache = a quarter of the edge array; emu as an SSD: 10 us, 1 M
# IOPS), writes OUT/results.jsonl (one JSON object per configuration),
# OUT/run.log (print_stats of each), and prints a table. Exit 1 if a BFS
# disagreed with the CPU's or the build failed. SCALE 22: ~1 GiB of edges,
# about 5 minutes on an H100 (emu naive dominates; ONLY=name,name limits it).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build/bench-lines}
scale=${2:-22}
ARCH=${ARCH:-sm_90}
NVCC=${NVCC:-nvcc}
bin=build/bench-lines
mkdir -p "$out" "$bin"
make -s -C runtime/cuda lib ARCH="$ARCH" >"$out/build.log" 2>&1 || { echo "runtime build failed"; tail -20 "$out/build.log"; exit 1; }
"$NVCC" -O3 -std=c++17 -arch="$ARCH" -I runtime/cuda/include bench/lines/bfs_lines.cu -L runtime/cuda/build -lbam -lcuda \
	-lpthread -o "$bin/bfs_lines" >>"$out/build.log" 2>&1 || { echo "bfs_lines build failed"; tail -20 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/gpu.txt" 2>/dev/null || true
args=(--scale "$scale" --sources "${SOURCES:-4}")
[ -n "${ONLY:-}" ] && args+=(--only "$ONLY")
"$bin/bfs_lines" "${args[@]}" >"$out/results.jsonl" 2>"$out/run.log"
rc=$?
command -v python3 >/dev/null && python3 - "$out/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
base = {r["name"]: r for r in rows}
print(f'{"name":24} {"line":>5} {"policy":>6} {"ms/BFS":>9} {"lines/BFS":>11} {"bytes/edges":>11} {"vs zero-copy":>12} ok')
zc = base.get("zero_copy", {}).get("ms_per_bfs")
for r in rows:
    rel = f'{r["ms_per_bfs"] / zc:.2f}x' if zc and r["ms_per_bfs"] else "-"
    print(f'{r["name"]:24} {r["line_bytes"]:>5} {r["policy"]:>6} {r["ms_per_bfs"]:>9.2f} {r["lines_per_bfs"]:>11.0f} '
          f'{r["bytes_ratio"]:>11.3f} {rel:>12} {r["ok"]}')
PY
[ $rc -eq 0 ] || echo "bfs_lines exited $rc (see $out/run.log)"
exit $rc
