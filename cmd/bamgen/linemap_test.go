package main

import (
	"fmt"
	"strings"
	"testing"
)

func TestWithLineDirectives(t *testing.T) {
	orig := "a\nb\nc\nd\ne\n"
	for _, tc := range []struct{ name, out, want string }{
		{"unchanged", orig, "#line 1 \"k.cu\"\na\nb\nc\nd\ne\n"},
		{"inserted at top", "#include <bam/bam.cuh>\na\nb\nc\nd\ne\n",
			"#line 1 \"k.cu\"\n#include <bam/bam.cuh>\n#line 1 \"k.cu\"\na\nb\nc\nd\ne\n"},
		{"changed line", "a\nB\nc\nd\ne\n", "#line 1 \"k.cu\"\na\nB\nc\nd\ne\n"},
		{"inserted lines", "a\nb\nx\ny\nc\nd\ne\n", "#line 1 \"k.cu\"\na\nb\nx\ny\n#line 3 \"k.cu\"\nc\nd\ne\n"},
		{"removed lines", "a\nd\ne\n", "#line 1 \"k.cu\"\na\n#line 4 \"k.cu\"\nd\ne\n"},
		{"after a continued line", "a\n#define X \\\nc\nd\ne\n",
			"#line 1 \"k.cu\"\na\n#define X \\\nc\nd\ne\n"},
		{"raw string: top only", "x\na\nR\"(b)\"\nc\nd\ne\n", "#line 1 \"k.cu\"\nx\na\nR\"(b)\"\nc\nd\ne\n"},
		{"the port's own directive", "#include <bam/bam.cuh>\n#line 1 \"rel/k.cu\"\na\nb\nc\nd\ne\n",
			"#line 1 \"k.cu\"\n#include <bam/bam.cuh>\n#line 1 \"k.cu\"\na\nb\nc\nd\ne\n"},
		{"no final newline", "a\nb\nc\nd\nz\ne", "#line 1 \"k.cu\"\na\nb\nc\nd\nz\n#line 5 \"k.cu\"\ne"},
	} {
		in := orig
		if !strings.HasSuffix(tc.out, "\n") {
			in = strings.TrimSuffix(orig, "\n")
		}
		if got := string(withLineDirectives("k.cu", []byte(in), []byte(tc.out))); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	if got := string(withLineDirectives(`d\"x.cu`, []byte("a\n"), []byte("a\n"))); !strings.HasPrefix(got, `#line 1 "d\\\"x.cu"`) {
		t.Errorf("name not escaped: %q", got)
	}
}

// Every unchanged line of a real port is numbered as in the original.
func TestLineDirectivesKeepOriginalNumbers(t *testing.T) {
	orig := strings.Repeat("int f%d;\n", 1)
	var o, out strings.Builder
	for i := 1; i <= 200; i++ {
		line := strings.Replace(orig, "%d", strings.Repeat("x", i%7)+string(rune('a'+i%26)), 1)
		o.WriteString(line)
		if i%17 == 0 {
			out.WriteString("// inserted\n// inserted\n")
		}
		if i%23 != 0 {
			out.WriteString(line)
		}
	}
	got := withLineDirectives("k.cu", []byte(o.String()), []byte(out.String()))
	origLines := strings.Split(o.String(), "\n")
	next := 0
	for _, l := range strings.Split(string(got), "\n") {
		if strings.HasPrefix(l, "#line ") {
			var n int
			if _, err := fmtSscan(l, &n); err != nil {
				t.Fatal(err)
			}
			next = n
			continue
		}
		if l != "// inserted" && l != "" && origLines[next-1] != l {
			t.Fatalf("line %q numbered %d, original line %d is %q", l, next, next, origLines[next-1])
		}
		next++
	}
}

func fmtSscan(l string, n *int) (int, error) { return fmt.Sscanf(l, "#line %d", n) }
