package edit

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// numbered simulates the compiler: the line number it gives each output
// line (0 for the #line directives themselves).
func numbered(t *testing.T, out string) []int {
	t.Helper()
	var nums []int
	next := 1
	for _, l := range splitLines([]byte(out)) {
		if strings.HasPrefix(l, "#line ") {
			var n int
			if _, err := fmt.Sscanf(l, "#line %d", &n); err != nil {
				t.Fatalf("bad directive %q", l)
			}
			nums = append(nums, 0)
			next = n
			continue
		}
		nums = append(nums, next)
		next++
	}
	return nums
}

func TestApplyLines(t *testing.T) {
	src := "a\nb\nc\nd\ne\n"
	for _, tc := range []struct {
		name  string
		edits []Edit
		out   string
		lines Lines
	}{
		{"unchanged", nil, src, Lines{1, 2, 3, 4, 5}},
		{"changed in place", []Edit{{Start: 2, End: 3, New: "B"}}, "a\nB\nc\nd\ne\n", Lines{1, 2, 3, 4, 5}},
		{"lines inserted", []Edit{{Start: 4, End: 4, New: "x\ny\n"}},
			"a\nb\nx\ny\n#line 3 \"f.cu\"\nc\nd\ne\n", Lines{1, 2, 0, 0, Directive, 3, 4, 5}},
		{"lines removed", []Edit{{Start: 2, End: 6}}, "a\n#line 4 \"f.cu\"\nd\ne\n", Lines{1, Directive, 4, 5}},
		{"statement kept on its lines", []Edit{{Start: 2, End: 5, New: "X,\nY"}}, "a\nX,\nY\nd\ne\n", Lines{1, 2, 3, 4, 5}},
		{"statement shrunk", []Edit{{Start: 2, End: 7, New: "X,\nY"}}, "a\nX,\n#line 4 \"f.cu\"\nY\ne\n", Lines{1, 2, Directive, 4, 5}},
		{"statement grown", []Edit{{Start: 2, End: 5, New: "X,\nY,\nZ"}},
			"a\nX,\nY,\n#line 3 \"f.cu\"\nZ\nd\ne\n", Lines{1, 2, 0, Directive, 3, 4, 5}},
		{"a line broken mid-way", []Edit{{Start: 3, End: 3, New: "\n  s;\n#x\n"}},
			"a\nb\n  s;\n#x\n#line 2 \"f.cu\"\n\nc\nd\ne\n", Lines{1, 2, 0, 0, Directive, 2, 3, 4, 5}},
		{"no final newline", []Edit{{Start: 8, End: 8, New: "z\n"}, {Start: 9, End: 10}}, "a\nb\nc\nd\nz\n#line 5 \"f.cu\"\ne", Lines{1, 2, 3, 4, 0, Directive, 5}},
	} {
		s := src
		if tc.name == "no final newline" {
			s = strings.TrimSuffix(src, "\n")
			tc.edits = tc.edits[:1]
		}
		out, lines, err := ApplyLines([]byte(s), tc.edits, "f.cu")
		if err != nil || string(out) != tc.out || fmt.Sprint(lines) != fmt.Sprint(tc.lines) {
			t.Errorf("%s:\n got %q %v %v\nwant %q %v", tc.name, out, lines, err, tc.out, tc.lines)
		}
		if plain, _ := Apply([]byte(s), tc.edits, ""); strings.Contains(string(plain), "#line") {
			t.Errorf("%s: a directive without a file name: %q", tc.name, plain)
		}
	}
}

// No directive goes where it would change the program: after a line
// continued by a backslash, inside a block comment or a raw string.
func TestApplyLinesUnsafePlaces(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"continued macro", "#define X \\\n  1\nint y;\n", "#define X \\\n// new\n  1\n#line 3 \"f.cu\"\nint y;\n"},
		{"block comment", "/* a\nb */\nint y;\n", "/* a\n// new\nb */\n#line 3 \"f.cu\"\nint y;\n"},
		{"raw string", "auto s = R\"x(a\nb)x\";\nint y;\n", "auto s = R\"x(a\n// new\nb)x\";\n#line 3 \"f.cu\"\nint y;\n"},
	} {
		at := strings.Index(tc.src, "\n") + 1
		out, err := Apply([]byte(tc.src), []Edit{{Start: at, End: at, New: "// new\n"}}, "f.cu")
		if err != nil || string(out) != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, out, tc.want)
		}
	}
	// Quotes inside comments, apostrophes as digit separators, and a raw
	// string's delimiter do not confuse the scan.
	src := "int a = 1'000; // it's\nconst char *s = \"/*\";\nint b;\n"
	out, err := Apply([]byte(src), []Edit{{Start: 0, End: 0, New: "// top\n"}}, "f.cu")
	if err != nil || !strings.Contains(string(out), "// top\n#line 1 \"f.cu\"\nint a") {
		t.Errorf("got %q", out)
	}
	safe := directiveSafe([]byte(src), lineStarts([]byte(src)))
	if !safe[2] || !safe[3] {
		t.Errorf("safe = %v", safe)
	}
}

// Random edits: every line Lines names is numbered as that original line
// by the compiler, and every untouched original line comes out with its
// own number.
func TestApplyLinesKeepsNumbers(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var orig []string
	for i := 1; i <= 120; i++ {
		orig = append(orig, fmt.Sprintf("line%d;\n", i))
	}
	src := strings.Join(orig, "")
	for iter := 0; iter < 300; iter++ {
		var edits []Edit
		at := 0
		for at < len(src) {
			at += rng.Intn(60)
			if at > len(src) {
				break
			}
			end := at + rng.Intn(3)*rng.Intn(20)
			if end > len(src) {
				end = len(src)
			}
			text := strings.Repeat("ins\n", rng.Intn(3))
			if rng.Intn(2) == 0 {
				text += "x"
			}
			edits = append(edits, Edit{Start: at, End: end, New: text})
			at = end + 1
		}
		out, lines, err := ApplyLines([]byte(src), edits, "f.cu")
		if err != nil {
			t.Fatal(err)
		}
		outLines := splitLines(out)
		if len(outLines) != len(lines) {
			t.Fatalf("%d output lines, %d in the map", len(outLines), len(lines))
		}
		nums := numbered(t, string(out))
		for i, o := range lines {
			if o > 0 && nums[i] != o {
				t.Fatalf("edits %v: output line %d %q maps to %d, the compiler numbers it %d\n%s", edits, i+1, outLines[i], o, nums[i], out)
			}
			if o == Directive && !strings.HasPrefix(outLines[i], "#line ") {
				t.Fatalf("line %d %q marked as a directive", i+1, outLines[i])
			}
		}
		at = 0
		for n, l := range orig {
			s, e := at, at+len(l)
			at = e
			touched := false
			for _, ed := range edits {
				touched = touched || ed.Start < e && ed.End >= s
			}
			if touched {
				continue
			}
			i := slices.Index(outLines, l)
			if i < 0 || nums[i] != n+1 {
				t.Fatalf("edits %v: untouched line %q not numbered %d\n%s", edits, l, n+1, out)
			}
		}
		// --line-directives over the same map: the same numbers, each
		// directive once, one at the top.
		d := Directives(out, lines, "g.cu")
		if !strings.HasPrefix(string(d), "#line ") || strings.Contains(string(d), "f.cu") {
			t.Fatalf("Directives: %q", d)
		}
		for i, l := range splitLines(d) {
			if i > 0 && strings.HasPrefix(l, "#line ") && strings.HasPrefix(splitLines(d)[i-1], "#line ") {
				t.Fatalf("two directives in a row:\n%s", d)
			}
		}
	}
}

func TestDirectives(t *testing.T) {
	if got := string(Directives([]byte("a\nb\n"), nil, `d\"x.cu`)); got != "#line 1 \"d\\\\\\\"x.cu\"\na\nb\n" {
		t.Errorf("unchanged file: %q", got)
	}
	out, lines, err := ApplyLines([]byte("a\nb\n"), []Edit{{Start: 0, End: 0, New: "#include <x>\n"}}, "rel/k.cu")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(Directives(out, lines, "/abs/k.cu")), "#line 1 \"/abs/k.cu\"\n#include <x>\n#line 1 \"/abs/k.cu\"\na\nb\n"; got != want {
		t.Errorf("the port's own directive is replaced:\n got %q\nwant %q", got, want)
	}
}

// A statement inserted after a line shows that line (so __LINE__ in it
// names the statement it follows); the lines after it are renumbered.
func TestApplyLinesFollows(t *testing.T) {
	src := "a\nb\nc\n"
	out, lines, err := ApplyLines([]byte(src), []Edit{{Start: 4, End: 4, New: "x\ny\n", Follows: true}}, "f.cu")
	want := "a\nb\n#line 2 \"f.cu\"\nx\ny\n#line 3 \"f.cu\"\nc\n"
	if err != nil || string(out) != want || fmt.Sprint(lines) != fmt.Sprint(Lines{1, 2, Directive, 2, 0, Directive, 3}) {
		t.Errorf("got %q %v %v\nwant %q", out, lines, err, want)
	}
}
