package parse

import "testing"

// TestDefineNameEnd checks defineNameEnd against directiveNameAt's name
// compared with "define" on every directive spelled from a few pieces
// (names that start like define, blanks, the "%:" digraph, ends of line).
func TestDefineNameEnd(t *testing.T) {
	heads := []string{"#", "# ", "#\t ", "%:", "%: "}
	names := []string{"", "d", "def", "defin", "define", "defined", "define_", "define1", "defines", "Define", "undef", "include", "definf"}
	tails := []string{"", " X 1", "(", "X", "\t", "\\\n X", "/**/X", "é"}
	n := 0
	for _, h := range heads {
		for _, name := range names {
			for _, tail := range tails {
				src := "x\n" + h + name + tail
				start, end := 2, len(src)
				i, j := directiveNameAt(src, start, end)
				want := -1
				if src[i:j] == "define" {
					want = j
				}
				if got := defineNameEnd(src, start, end); got != want {
					t.Errorf("defineNameEnd(%q) = %d, want %d", src[start:end], got, want)
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no cases")
	}
}
