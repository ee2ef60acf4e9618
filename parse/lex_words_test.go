package parse

import (
	"fmt"
	"strings"
	"testing"
)

// TestLexWordClasses checks that the classes and token ids the lexer gives
// identifiers in the parser's view (run's filter, then classifyFast or
// classifyWord) are wordInfo's, for every reserved word, words one byte
// longer or shorter or with a changed byte, at every distance from the end
// of the source (classifyFast reads 16 bytes from a word's start), and in
// runs longer than the 256 words of one batch.
func TestLexWordClasses(t *testing.T) {
	var words []string
	for w := range reservedWords {
		words = append(words, w, w+"x", w[:len(w)-1]+"Z", "_"+w)
		if len(w) > 1 {
			words = append(words, w[:len(w)-1])
		}
		if len(w) > 8 {
			words = append(words, w[:8]+"Q"+w[9:])
		}
	}
	words = append(words, strings.Repeat("a", 40), "__launch_bounds_x", "__PRETTY_FUNCTION_")
	check := func(src string) {
		t.Helper()
		l := lexAll(src, make([]ptok, 0, 16))
		var prescans []int32
		for k, pt := range l.view {
			if pt.Kind != Identifier {
				continue
			}
			if prescanWord[pt.kw] {
				prescans = append(prescans, int32(k))
			}
			w := src[pt.Start:pt.End]
			cls, kw := wordInfo(w)
			if pt.cls != cls || pt.kw != kw {
				t.Fatalf("%q in %q: class %d id %d, want %d %d", w, src, pt.cls, pt.kw, cls, kw)
			}
		}
		if fmt.Sprint(prescans) != fmt.Sprint(l.prescans) {
			t.Fatalf("%q: prescans %v, want %v", src, l.prescans, prescans)
		}
	}
	for _, w := range words {
		for pad := 0; pad < 20; pad++ {
			check(w + strings.Repeat(" ", pad))
			check("x " + w + strings.Repeat("+", pad))
		}
	}
	check(strings.Join(words, " "))
	check(strings.Join(words, "\n"))
}
