#!/usr/bin/env bash
# `go install github.com/bamgen/bamgen/cmd/bamgen@VERSION` from a module
# proxy, offline: the tracked files of this tree are packed as module
# version v0.99.0-test into a file-based proxy; dependencies come from the
# local module cache (itself a proxy layout, filled by `go mod download`).
# A fresh GOMODCACHE proves that nothing comes from the checkout. Then the
# installed binary must report that version and the runtime ABI, and carry
# the runtime: `bamgen runtime install` writes the tree's runtime files.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "test-go-install: FAIL: $*" >&2; exit 1; }
command -v zip >/dev/null || fail "zip not found (.ci/install-deps.sh installs it)"

mod=github.com/bamgen/bamgen
version=v0.99.0-test
cache=$(go env GOMODCACHE)
(cd "$root" && go mod download) # the dependencies, into the local cache (CI: already there)

# The module zip: every tracked file under $mod@$version/.
proxy=$tmp/proxy/$mod/@v
mkdir -p "$proxy" "$tmp/zip/$mod@$version"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$tmp/zip/$mod@$version")
(cd "$tmp/zip" && zip -qr "$proxy/$version.zip" "$mod@$version")
cp "$root/go.mod" "$proxy/$version.mod"
printf '{"Version":"%s","Time":"2026-01-01T00:00:00Z"}\n' "$version" >"$proxy/$version.info"
echo "$version" >"$proxy/list"

echo "test-go-install: go install $mod/cmd/bamgen@$version (GOPROXY=file://..., offline)"
env -u GOFLAGS GOFLAGS=-mod=mod GOMODCACHE="$tmp/modcache" GOBIN="$tmp/bin" \
	GOPROXY="file://$tmp/proxy,file://$cache/cache/download" GOSUMDB=off GOTOOLCHAIN=local \
	go install "$mod/cmd/bamgen@$version" || fail "go install"
[ -x "$tmp/bin/bamgen" ] || fail "no binary in GOBIN"

out=$("$tmp/bin/bamgen" version)
echo "$out" | sed 's/^/  /'
echo "$out" | grep -q "^bamgen $version\$" || fail "version does not name $version"
abi=$(sed -n 's/^#define BAM_ABI_VERSION \([0-9]*\).*/\1/p' "$root/runtime/cuda/include/bam/version.h")
echo "$out" | grep -q "^runtime ABI: $abi " || fail "version does not print runtime ABI $abi"
echo "$out" | grep -q "^revision: .*h1:" || fail "version does not print the module sum"

"$tmp/bin/bamgen" runtime install --prefix "$tmp/rt" 2>/dev/null
diff -r "$root/runtime/cuda/include" "$tmp/rt/include" || fail "installed headers differ from the tree's"
diff -r "$root/runtime/cuda/src" "$tmp/rt/src" || fail "installed sources differ from the tree's"
[ -f "$tmp/rt/lib/cmake/bamgen/bamgenConfig.cmake" ] || fail "no CMake package"
echo "test-go-install: 1 passed, 0 failed"
