package analysis

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bamgen/bamgen/parse"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHeaderMacros: quoted includes next to the file and on the include
// dirs are read recursively (cycles end), <...> includes are not, the
// first definition wins and function-like macros are skipped.
func TestHeaderMacros(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "helpers.h"), "#pragma once\n#include \"sub/more.h\"\n#define WARP_SHIFT 5 // log2 of the warp\n"+
		"#define MAX(a, b) ((a) > (b) ? (a) : (b))\n#define LONG \\\n  (1 << 4)\n#include \"helpers.h\"\n")
	writeFile(t, filepath.Join(dir, "sub", "more.h"), "#define WARP_SIZE (1 << WARP_SHIFT) /* 32 */\n#include \"../helpers.h\"\n#include \"inc.h\"\n")
	writeFile(t, filepath.Join(dir, "incdir", "inc.h"), "#define FROM_INCDIR 7\n")
	writeFile(t, filepath.Join(dir, "sys.h"), "#define SYSTEM 1\n")
	src := "#include <sys.h>\n#include \"helpers.h\"\n#include \"missing.h\"\n"
	got := HeaderMacros(filepath.Join(dir, "k.cu"), []byte(src), []string{filepath.Join(dir, "incdir")})
	want := map[string]string{"WARP_SHIFT": "5", "WARP_SIZE": "(1 << WARP_SHIFT)", "LONG": "(1 << 4)", "FROM_INCDIR": "7"}
	if len(got) != len(want) {
		t.Errorf("got %q, want %q", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (all: %q)", k, got[k], v, got)
		}
	}
	// The same walk names the headers it read, once each, in include order
	// (what --depfile lists).
	read := LocalHeaders(filepath.Join(dir, "k.cu"), []byte(src), []string{filepath.Join(dir, "incdir")})
	wantRead := []string{filepath.Join(dir, "helpers.h"), filepath.Join(dir, "sub", "more.h"), filepath.Join(dir, "incdir", "inc.h")}
	if strings.Join(read, " ") != strings.Join(wantRead, " ") {
		t.Errorf("LocalHeaders = %q, want %q", read, wantRead)
	}
}

// TestHeaderMacrosReachTheMapping: a warp shift defined in a local header
// makes the warp id visible; without the header it is unsure.
func TestHeaderMacrosReachTheMapping(t *testing.T) {
	dir := t.TempDir()
	src := "#include \"helpers.h\"\n__global__ void k(int *a) { int t = blockIdx.x * blockDim.x + threadIdx.x; int w = t >> WARP_SHIFT; a[w] = 0; }\n"
	path := filepath.Join(dir, "k.cu")
	m := KernelMapping(Analyze(parse.ParseFile(path, []byte(src))).Kernels()[0])
	if m.Warp != nil || len(m.Unsure) != 1 {
		t.Fatalf("without the header: warp=%q unsure=%d, want none and 1", name(m.Warp), len(m.Unsure))
	}
	writeFile(t, filepath.Join(dir, "helpers.h"), "#define WARP_SHIFT 5\n")
	m = KernelMapping(Analyze(parse.ParseFile(path, []byte(src))).Kernels()[0])
	if name(m.Warp) != "w" || len(m.Unsure) != 0 {
		t.Fatalf("with the header: warp=%q unsure=%d, want w and 0", name(m.Warp), len(m.Unsure))
	}
}
