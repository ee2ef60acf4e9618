package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bamgen flags names the same library directory before and after the
// library is built, and warns (on stderr only) while it is missing.
func TestFlagsBeforeAndAfterBuild(t *testing.T) {
	src := filepath.Join(t.TempDir(), "bam")
	if code, _, errOut := runMain(t, "runtime", "install", "--prefix", src); code != 0 {
		t.Fatalf("install: exit %d: %s", code, errOut)
	}
	installed := t.TempDir() // 'make install' layout: include/ and lib/
	for _, tc := range []struct {
		name, prefix, libDir string
		build                func()
	}{
		{"source tree", src, filepath.Join(src, "build"), func() {
			writeFile(t, mkdir(t, filepath.Join(src, "build")), "libbam.a", []byte("!<arch>\n"))
		}},
		{"make install", installed, filepath.Join(installed, "lib"), func() {
			writeFile(t, mkdir(t, filepath.Join(installed, "lib")), "libbam.a", []byte("!<arch>\n"))
		}},
	} {
		want := "-std=c++17 -I" + filepath.Join(tc.prefix, "include") + " -L" + tc.libDir + " -lbam -lpthread\n"
		code, before, errOut := runMain(t, "flags", "--prefix", tc.prefix)
		if code != 0 || before != want {
			t.Errorf("%s, not built: exit %d %q, want %q", tc.name, code, before, want)
		}
		if !strings.Contains(errOut, "warning: "+filepath.Join(tc.libDir, "libbam.a")+" does not exist yet") {
			t.Errorf("%s, not built: no warning naming the library: %q", tc.name, errOut)
		}
		if _, _, errOut := runMain(t, "flags", "--cflags", "--prefix", tc.prefix); errOut != "" {
			t.Errorf("%s: --cflags warns: %q", tc.name, errOut)
		}
		tc.build()
		code, after, errOut := runMain(t, "flags", "--prefix", tc.prefix)
		if code != 0 || after != want || errOut != "" {
			t.Errorf("%s, built: exit %d %q (stderr %q), want %q and no warning", tc.name, code, after, errOut, want)
		}
	}
}

func mkdir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runtime install writes bamgen's CMake package where find_package looks
// under the prefix, naming the bamgen that installed it.
func TestRuntimeInstallCMakePackage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	if code, _, errOut := runMain(t, "runtime", "install", "--prefix", dir); code != 0 {
		t.Fatalf("install: exit %d: %s", code, errOut)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, "lib", "cmake", "bamgen", "bamgenConfig.cmake"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"function(bamgen_port target)", "add_library(bam::bam ALIAS", "DEPFILE", "--depfile", "--line-directives"} {
		if !strings.Contains(string(cfg), w) {
			t.Errorf("bamgenConfig.cmake lacks %q", w)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cmake", "bamRuntime.cmake")); err != nil {
		t.Errorf("bam::bam's sources function not installed: %v", err)
	}
	tool, err := os.ReadFile(filepath.Join(dir, "lib", "cmake", "bamgen", "bamgenTool.cmake"))
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	if !strings.Contains(string(tool), `set(_bamgen_installed_by "`+filepath.ToSlash(exe)+`")`) {
		t.Errorf("bamgenTool.cmake = %q, want it to name %s", tool, exe)
	}
	if code, _, errOut := runMain(t, "runtime", "install", "--prefix", dir); code != 0 || !strings.Contains(errOut, "(0 files written)") {
		t.Errorf("reinstall: exit %d: %s", code, errOut)
	}
}
