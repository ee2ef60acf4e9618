package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeBamgen answers like bamgen: analyze prints one error diagnostic for
// files containing "BROKEN"; port without --auto copies the input (no-op);
// port --auto appends a line (and, for inputs that already end with it,
// appends it again when the input contains "NONIDEM"), and reports one
// ported and one refused choice.
const fakeBamgen = `#!/bin/sh
cmd=$1; shift
in=""; out=""; json=0; auto=0
while [ $# -gt 0 ]; do
  case "$1" in
    --json) json=1;;
    --auto) auto=1;;
    --config|--opt) shift;;
    -o) shift; out=$1;;
    *) in=$1;;
  esac
  shift
done
if [ "$cmd" = analyze ]; then
  if grep -q BROKEN "$in"; then
    echo '{"files":[{"diagnostics":[{"line":1,"col":1,"severity":"error","code":"PARSE011","message":"statement not understood"}]}]}'
    exit 1
  fi
  echo '{"files":[{"diagnostics":[]}]}'
  exit 0
fi
if [ $auto = 0 ]; then cat "$in"; exit 0; fi
res=$(cat "$in")
if ! grep -q '^// ported' "$in" || grep -q NONIDEM "$in"; then res="$res
// ported"; fi
if [ $json = 1 ]; then
  printf '%s\n' "$res" > "$out"
  echo '{"files":[{"changed":true,"choices":[{"kernel":"k","param":"a","ported":true},{"kernel":"k","param":"b","ported":false,"why":"b is used in x"}],"diagnostics":[{"line":2,"col":1,"severity":"warning","code":"PORT032","message":"b is used in x; the kernel parameter stays a plain pointer"}]}]}'
else
  printf '%s\n' "$res"
fi
`

func TestRunFile(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bamgen")
	if err := os.WriteFile(bin, []byte(fakeBamgen), 0o755); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(dir, "proj")
	if err := os.MkdirAll(filepath.Join(proj, "include", "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"good.cu":              "__global__ void k(int *a, int *b) {}\n",
		"bad.cu":               "BROKEN\n",
		"nonidem.cu":           "NONIDEM\n",
		"include/lib/util.cuh": "#pragma once\n",
		"README.md":            "not cuda\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(proj, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, incs := scan(proj)
	if strings.Join(got, ",") != "bad.cu,good.cu,include/lib/util.cuh,nonidem.cu" {
		t.Errorf("scan files = %v", got)
	}
	// the header's directory and its parent (for "lib/util.cuh") are include paths
	want := map[string]bool{proj: true, filepath.Join(proj, "include"): true, filepath.Join(proj, "include", "lib"): true}
	if len(incs) != len(want) {
		t.Errorf("include dirs = %v", incs)
	}
	for _, d := range incs {
		if !want[d] {
			t.Errorf("unexpected include dir %s", d)
		}
	}

	cfg := &config{bamgen: bin, out: filepath.Join(dir, "out"), bamTimeout: 10 * time.Second}
	if err := os.MkdirAll(filepath.Join(cfg.out, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runFile(cfg, "proj", proj, "good.cu", incs)
	if r.AnalyzeErrors != 0 || r.AnalyzeFatal != "" || !r.NoopIdentical {
		t.Errorf("good.cu: analyze %d %q noop %v", r.AnalyzeErrors, r.AnalyzeFatal, r.NoopIdentical)
	}
	if r.Auto.Chosen != 2 || r.Auto.Ported != 1 || !r.Auto.Changed || r.Auto.Idempotent != "yes" {
		t.Errorf("good.cu auto: %+v", r.Auto)
	}
	if len(r.Auto.Refusals) != 1 || r.Auto.Refusals[0].Code != "PORT032" || r.Auto.Refusals[0].Param != "b" {
		t.Errorf("good.cu refusals: %+v", r.Auto.Refusals)
	}
	if r.OrigCompiles != "skip" || r.Auto.Silent {
		t.Errorf("compile=false must not compile: %q %v", r.OrigCompiles, r.Auto.Silent)
	}

	r = runFile(cfg, "proj", proj, "bad.cu", incs)
	if r.AnalyzeErrors != 1 {
		t.Errorf("bad.cu: %d analyze errors, want 1", r.AnalyzeErrors)
	}
	r = runFile(cfg, "proj", proj, "nonidem.cu", incs)
	if r.Auto.Idempotent != "no" {
		t.Errorf("nonidem.cu: idempotent %q, want no", r.Auto.Idempotent)
	}
	// the idempotence input is removed from the project again
	left, _ := filepath.Glob(filepath.Join(proj, ".realworld-idem-*"))
	if len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}

	var tl tally
	tl.add(r)
	if tl.idemAutoN != 1 || tl.idemAuto != 0 || tl.chosen != 2 || tl.ported != 1 {
		t.Errorf("tally: %+v", tl)
	}
}

func TestStaticBreak(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"no bam", "#include <cstdio>\nint main() { return 0; }\n", ""},
		{"kernel only", "__global__ void k(bam::array<float> a) {}\n", "no include"},
		{"top level", "#include <cstdio>\n#include <bam/bam.cuh>\n__global__ void k(bam::array<float> a) {}\n", ""},
		{"under ifdef", "#include <cstdio>\n#ifdef TIMING\n#include <ctime>\n#include <bam/bam.cuh>\n#endif\nvoid f(bam::array<int> a);\n", "include under #if"},
		{"include guard", "#ifndef K_CUH\n#define K_CUH\n#include <bam/bam.cuh>\n__global__ void k(bam::array<float> a);\n#endif\n", ""},
		{"guard then ifdef", "#ifndef K_CUH\n#define K_CUH\n#if USE_X\n#include <bam/bam.cuh>\n#endif\nvoid f(bam::array<int> a);\n#endif\n", "include under #if"},
		{"stats after return", "#include <bam/bam.cuh>\nint main() { bam::runtime& r = bam::default_runtime();\n  return 0;\nif (bam::default_runtime().cfg().stats) bam::default_runtime().print_stats(stderr); }\n", "statistics after return"},
		{"stats before return", "#include <bam/bam.cuh>\nint main() {\n  if (bam::default_runtime().cfg().stats) bam::default_runtime().print_stats(stderr); return 0;\n}\n", ""},
	}
	for _, c := range cases {
		if got := staticBreak([]byte(c.src)); got != c.want {
			t.Errorf("%s: staticBreak = %q, want %q", c.name, got, c.want)
		}
	}
}
