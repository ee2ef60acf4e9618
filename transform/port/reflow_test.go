package port

import (
	"strings"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"auto a = rt.f<T>(x, g(y, z), \"a, b\");", []string{"auto a = rt.f<T>(", "x, ", "g(y, z), ", "\"a, b\");"}},
		{"{ rt.free(a); a = rt.zeros<T>(n); }", []string{"{ rt.free(a); ", "a = rt.zeros<T>(n); ", "}"}},
		{"f(a[i, j], b);", []string{"f(", "a[i, j], ", "b);"}},
	} {
		got := splitArgs(tc.text)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || strings.Join(got, "") != tc.text {
			t.Errorf("splitArgs(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestMatchLine(t *testing.T) {
	args := []origArg{{"cudaMemcpy(d, h, n * sizeof(float), k)", 0}, {"d", 0}, {"h", 1}, {"n * sizeof(float)", 2}, {"k", 3}}
	for _, tc := range []struct {
		seg  string
		from int
		want int
	}{
		{"h", 0, 1},             // equal
		{"n", 0, 2},             // the count inside the byte count, not the call holding both
		{"h_bam", 0, 0},         // no word match: stays
		{"h", 2, 2},             // never back up
		{"(const T*)(h)", 0, 1}, // holds an original argument
	} {
		if got := matchLine(args, tc.seg, tc.from); got != tc.want {
			t.Errorf("matchLine(%q, %d) = %d, want %d", tc.seg, tc.from, got, tc.want)
		}
	}
}
