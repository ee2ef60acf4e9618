#!/usr/bin/env bash
# bamgen as a CMake pre-build step, with Debian's cmake and nvcc (no GPU):
#
#  1. examples/graph (a copy, so the tree is not touched) configures and
#     builds against `bamgen runtime install --prefix P`: every .cu is
#     ported at build time, bam::bam compiles the runtime from P's sources;
#  2. a rebuild with nothing changed ports nothing; touching one source
#     re-ports that file only; touching the header re-ports nothing (the
#     port reads no header) but recompiles; changing .bamgen.yaml re-ports
#     every file; a compiler error names the original file and line;
#  3. a CMake project outside the repository, written with only the lines
#     the README documents, builds against the same prefix;
#  4. header/library ABI skew: an object compiled against headers of
#     another ABI version fails to link with the libbam the package built.
#
# Usage: tests/build/cmake.sh [BAMGEN]   (default: build bin/bamgen)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
arch=${CUDA_ARCH:-80}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test-cmake: FAIL: $*" >&2; exit 1; }
step() { echo "test-cmake: $*"; }

bamgen=${1:-}
if [ -z "$bamgen" ]; then
	(cd "$root" && make -s build)
	bamgen=$root/bin/bamgen
fi
command -v cmake >/dev/null || fail "cmake not found (.ci/install-deps.sh installs it)"
prefix=$tmp/prefix
"$bamgen" runtime install --prefix "$prefix" 2>/dev/null
[ -f "$prefix/lib/cmake/bamgen/bamgenConfig.cmake" ] || fail "runtime install wrote no CMake package"

# ---- 1. the example
cp -r "$root/examples/graph" "$tmp/src"
build=$tmp/build
step "configure examples/graph (cmake $(cmake --version | head -1 | awk '{print $3}'), sm_$arch)"
cmake -S "$tmp/src" -B "$build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CUDA_ARCHITECTURES="$arch" \
	-DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; fail "configure"; }

# build LOG: build and keep the output; ported FILE...: exactly these were ported.
build() {
	cmake --build "$build" -j 2 >"$tmp/$1.log" 2>&1 || { cat "$tmp/$1.log"; fail "build ($1)"; }
}
ported() {
	local log=$1; shift
	local got want
	got=$( { grep -o 'bamgen: porting [^ ]*' "$tmp/$log.log" || true; } | awk '{print $3}' | sort | tr '\n' ' ')
	want=$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ' ')
	[ "$got" = "$want" ] || { cat "$tmp/$log.log"; fail "$log: ported '$got', want '$want'"; }
}
step "build: ports main.cu, bfs.cu, degree.cu; compiles the runtime through bam::bam"
build first
ported first bfs.cu degree.cu main.cu
grep -q 'runtime.cu.o' "$tmp/first.log" || { cat "$tmp/first.log"; fail "bam::bam did not compile the runtime (no runtime.cu.o)"; }
[ -x "$build/graph" ] || fail "no graph executable"
grep -q 'bam::array<const VertexT> colidx' "$build/bamgen/graph/bfs.cu" || fail "bfs.cu was not ported"
head -1 "$build/bamgen/graph/bfs.cu" | grep -qF "#line 1 \"$tmp/src/bfs.cu\"" || fail "the ported copy does not start with #line naming the source"
nm -C "$build/graph" >"$tmp/nm.txt"; grep -q "bam::v[0-9]*::" "$tmp/nm.txt" || fail "graph does not link the versioned runtime"

step "no change: nothing ported"
build noop
ported noop
step "touch bfs.cu: bfs.cu re-ported, nothing else"
sleep 1; touch "$tmp/src/bfs.cu"
build touch-source
ported touch-source bfs.cu
grep -q 'bfs.cu.o' "$tmp/touch-source.log" || fail "bfs.cu not recompiled"
step "touch graph.h: the files that include it re-ported (the port reads local headers for macros; --depfile lists them) and recompiled"
sleep 1; touch "$tmp/src/graph.h"
build touch-header
ported touch-header bfs.cu degree.cu main.cu
grep -q 'degree.cu.o' "$tmp/touch-header.log" || { cat "$tmp/touch-header.log"; fail "degree.cu not recompiled after graph.h changed"; }
step "edit .bamgen.yaml: every file re-ported"
sleep 1; echo "# edited" >>"$tmp/src/.bamgen.yaml"
build config
ported config bfs.cu degree.cu main.cu

step "a compiler error names the original file and line"
line=$(grep -n 'atomicAdd' "$tmp/src/degree.cu" | cut -d: -f1)
sed -i "${line}s/atomicAdd(/atomicAdd(undefined_name + /" "$tmp/src/degree.cu"
if cmake --build "$build" >"$tmp/error.log" 2>&1; then fail "the broken degree.cu built"; fi
grep -q "$tmp/src/degree.cu($line): error" "$tmp/error.log" || { cat "$tmp/error.log"; fail "error does not name $tmp/src/degree.cu($line)"; }

# ---- 3. a project outside the repository, documented lines only
step "a project outside the repository (the README's lines) builds against the prefix"
out=$tmp/outside
mkdir -p "$out"
cp "$root/testdata/kernels/bfs_warp/bfs_warp.cu" "$out/app.cu"
cat >"$out/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(app LANGUAGES CXX CUDA)
find_package(bamgen REQUIRED)
add_executable(app app.cu)
bamgen_port(app AUTO OPT auto)
target_link_libraries(app PRIVATE bam::bam)
CM
(cd "$out" && cmake -S . -B build -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CUDA_ARCHITECTURES="$arch" >"$tmp/outside.log" 2>&1 &&
	cmake --build build -j 2 >>"$tmp/outside.log" 2>&1) || { cat "$tmp/outside.log"; fail "outside project"; }
[ -x "$out/build/app" ] || fail "outside project: no app"
grep -q 'odt' "$out/build/bamgen/app/app.cu" || fail "outside project: --opt auto did not apply odt"

# ---- 4. ABI skew
step "header/library ABI skew fails to link"
lib=$(find "$build" -name 'libbamgen_bam.a' | head -1)
[ -n "$lib" ] || fail "no libbamgen_bam.a in the example build"
cat >"$tmp/abi.cpp" <<'CPP'
#include <bam/config.h>
#include <cstdio>
int main() { std::printf("%s\n", bam::backend_name(bam::config::from_env().kind)); }
CPP
cxx=${CXX:-g++}
"$cxx" -std=c++17 -I"$prefix/include" "$tmp/abi.cpp" "$lib" -o "$tmp/abi_same" ||
	fail "the same ABI does not link"
[ "$("$tmp/abi_same")" = hbm ] || fail "abi_same printed the wrong backend"
cp -r "$prefix/include" "$tmp/skew"
sed -i 's/^#define BAM_ABI_VERSION .*/#define BAM_ABI_VERSION 999/' "$tmp/skew/bam/version.h"
if "$cxx" -std=c++17 -I"$tmp/skew" "$tmp/abi.cpp" "$lib" -o "$tmp/abi_skew" 2>"$tmp/skew.log"; then
	fail "headers of ABI 999 linked with a libbam of ABI $(grep -o 'BAM_ABI_VERSION [0-9]*' "$prefix/include/bam/version.h")"
fi
grep -q 'undefined reference to .bam::v999::' "$tmp/skew.log" || { cat "$tmp/skew.log"; fail "skew failed for another reason"; }

echo "test-cmake: 9 passed, 0 failed"
