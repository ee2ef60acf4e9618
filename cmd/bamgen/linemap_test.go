package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkNumbered: in out (a ported copy with #line directives), every line
// of src that occurs once in src and once in out is numbered as in src,
// counting the directives as a compiler does, and they all name file.
func checkNumbered(t *testing.T, src, out, file string) {
	t.Helper()
	orig := strings.Split(src, "\n")
	lines := strings.Split(out, "\n")
	count := func(ls []string, l string) int {
		n := 0
		for _, x := range ls {
			if x == l {
				n++
			}
		}
		return n
	}
	numbered := map[string]int{}
	next := 0
	for _, l := range lines {
		var n int
		var name string
		if _, err := fmt.Sscanf(l, "#line %d %q", &n, &name); err == nil {
			if name != file {
				t.Errorf("%q names %s, want %s", l, name, file)
			}
			next = n
			continue
		}
		numbered[l] = next
		next++
	}
	checked := 0
	for i, l := range orig {
		if strings.TrimSpace(l) == "" || count(orig, l) != 1 || count(lines, l) != 1 {
			continue
		}
		checked++
		if numbered[l] != i+1 {
			t.Errorf("%q numbered %d, it is line %d of the input\n%s", l, numbered[l], i+1, out)
		}
	}
	if checked < 3 {
		t.Errorf("only %d lines kept:\n%s", checked, out)
	}
}

// --line-directives: the ported copy starts with a directive naming the
// input, has one after each insertion (the port's own are renamed, never
// doubled), and keeps every line's number: for a file ported alone and for
// one ported with the rest of its program as --context (the port's own
// directives name the file as given, here relative).
func TestLineDirectivesNumbering(t *testing.T) {
	files := map[string]string{"src/main.cu": programFiles["src/main.cu"], "src/scale.cu": programFiles["src/scale.cu"],
		"src/scale.cuh": "#pragma once\n#include <bam/bam.cuh>\n__global__ void scale(bam::array<float> data, float k, int n);\n",
		"src/lines.cu":  nvccLinesInput}
	dir := writeProgram(t, files)
	t.Chdir(dir) // relative names: the port's own directives name them so, --line-directives the absolute path
	for _, args := range [][]string{
		{"--array", "data", "--context", "src/scale.cu", "src/main.cu"},
		{"--array", "colidx", "--array", "x", "--opt", "auto", "src/lines.cu"},
	} {
		in := args[len(args)-1]
		abs, _ := filepath.Abs(in)
		o := filepath.Join(dir, "out.cu")
		code, _, errOut := runMain(t, append([]string{"port", "--line-directives", "-o", o}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		b, _ := os.ReadFile(o)
		src, _ := os.ReadFile(in)
		if !strings.HasPrefix(string(b), "#line 1 ") || !strings.Contains(string(b), "_bam") {
			t.Errorf("%v: not ported, or no directive at the top:\n%s", args, b)
		}
		if strings.Contains(string(b), "\"\n#line ") {
			t.Errorf("%v: two directives in a row:\n%s", args, b)
		}
		checkNumbered(t, string(src), string(b), abs)
	}
}
