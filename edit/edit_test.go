package edit

import (
	"fmt"
	"strings"
	"testing"
)

func TestApplyRejectsBadEdits(t *testing.T) {
	src := []byte("abcdef\n")
	if _, err := Apply(src, []Edit{{Start: 1, End: 3, New: "x", Rewrite: "one"}, {Start: 2, End: 4, New: "y", Rewrite: "two"}}, "f"); err == nil ||
		!strings.Contains(err.Error(), `"two"`) || !strings.Contains(err.Error(), `"one"`) {
		t.Errorf("overlap: %v", err)
	}
	if _, err := Apply(src, []Edit{{Start: 5, End: 99, Rewrite: "far"}}, "f"); err == nil || !strings.Contains(err.Error(), `"far"`) {
		t.Errorf("out of range: %v", err)
	}
	if _, err := Apply(src, []Edit{{Start: 3, End: 3, New: "x\n", Rewrite: "mid", Reline: true}}, "f"); err == nil {
		t.Error("a #line directive after a partial line must be rejected")
	}
	// A line added at the end needs no directive: nothing follows it.
	out, err := Apply(src, []Edit{{Start: 7, End: 7, New: "// x\n", Reline: true}, {Start: 0, End: 1, New: "A"}, {Start: 1, End: 1, New: "+"}}, "f.cu")
	if err != nil || string(out) != "A+bcdef\n// x\n" {
		t.Errorf("Apply = %q, %v", out, err)
	}
}

func TestTouches(t *testing.T) {
	spans := []Span{{10, 20}, {30, 30}}
	cases := []struct {
		start, end int
		want       bool
	}{
		{0, 10, false}, {0, 11, true}, {19, 25, true}, {20, 30, false},
		{29, 31, true}, {30, 31, false}, {25, 30, false},
	}
	for _, c := range cases {
		if got := Touches(spans, c.start, c.end); got != c.want {
			t.Errorf("Touches(%d, %d) = %v, want %v", c.start, c.end, got, c.want)
		}
	}
}

func TestWithin(t *testing.T) {
	src := []byte("f(a, b)")
	edits := []Edit{{Start: 2, End: 3, New: "x"}, {Start: 2, End: 2, New: "<"}, {Start: 3, End: 3, New: ">"}, {Start: 5, End: 6, New: "y"}}
	if got := Within(src, edits, 2, 3); got != "x" {
		t.Errorf("Within(a) = %q, want %q (boundary insertions stay outside)", got, "x")
	}
	if got := Within(src, edits, 0, 7); got != "f(<x>, y)" {
		t.Errorf("Within(all) = %q", got)
	}
	bad := []Edit{{Start: 1, End: 4, New: "p"}, {Start: 2, End: 5, New: "q"}}
	if got := Within(src, bad, 0, 7); got != string(src) {
		t.Errorf("Within(overlapping) = %q, want the original text", got)
	}
}

// An enclosing pair goes around the other insertions at its two offsets,
// whatever order the edits come in (a rewrite's wrapper runs after the
// port's, but must end up inside the kernel versions' lambda).
func TestEnclosingInsertions(t *testing.T) {
	src := []byte("{body}")
	edits := []Edit{
		{Start: 1, End: 1, New: "[in "},
		{Start: 5, End: 5, New: " in]"},
		{Start: 5, End: 5, New: " out)", Encloses: Closes},
		{Start: 1, End: 1, New: "(out ", Encloses: Opens},
		{Start: 1, End: 1, New: "<also in "},
	}
	out, err := Apply(src, edits, "")
	if want := "{(out [in <also in body in] out)}"; err != nil || string(out) != want {
		t.Errorf("Apply = %q, %v; want %q", out, err, want)
	}
}

// Whole lines that repeat original lines (a kernel's direct clone) show
// those lines: a #line directive renumbers them, and another follows.
func TestRepeatedLines(t *testing.T) {
	src := []byte("a\nb\nc\n")
	out, lines, err := ApplyLines(src, []Edit{{Start: 6, End: 6, New: "a2\nb2\n", Repeats: true, RepeatsAt: 0}}, "f.cu")
	want := "a\nb\nc\n#line 1 \"f.cu\"\na2\nb2\n"
	if err != nil || string(out) != want {
		t.Fatalf("ApplyLines = %q, %v; want %q", out, err, want)
	}
	if got := lines[4:]; len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("repeated lines show %v, want [1 2]", got)
	}
}

// A statement copied into the line it starts on (a launch guarded by its
// direct clone's launch): the copy's lines after the first show the lines
// they copy, and the statement itself, now on a line of its own, shows its
// first line again.
func TestRepeatedLinesMidLine(t *testing.T) {
	src := []byte("x;\n  k(a,\n    b);\ny;\n")
	e := Edit{Start: 5, End: 6, New: "if (c) { d(a,\n    b); } else {\n  k", Repeats: true, RepeatsAt: 5}
	out, lines, err := ApplyLines(src, []Edit{e}, "f.cu")
	want := "x;\n  if (c) { d(a,\n    b); } else {\n#line 2 \"f.cu\"\n  k(a,\n    b);\ny;\n"
	if err != nil || string(out) != want {
		t.Fatalf("ApplyLines = %q, %v; want %q", out, err, want)
	}
	if got, want := fmt.Sprint(lines), fmt.Sprint(Lines{1, 2, 3, Directive, 2, 3, 4}); got != want {
		t.Errorf("lines %s, want %s", got, want)
	}
	// Without Repeats the copy's second line is an inserted line.
	e.Repeats = false
	_, lines, _ = ApplyLines(src, []Edit{e}, "f.cu")
	if lines[2] != 0 {
		t.Errorf("without Repeats the copied line shows %d, want 0", lines[2])
	}
}
