package parse

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// lexByNext lexes src with next alone, the lexer run's inline cases stand
// in for: the reference for TestRunMatchesNext.
func lexByNext(src []byte, view []ptok) *lexer {
	l := &lexer{src: src, view: view, parse: view != nil}
	l.toks = make([]Token, 0, 4)
	for l.pos < len(src) {
		l.next()
	}
	l.flushWords()
	l.closeConditionals()
	l.pos = len(src)
	l.emit(EOF, len(src))
	return l
}

// TestRunMatchesNext checks that run (tokens, view, diagnostics and the
// lists it keeps) gives what next alone gives, on token soups made to hit
// run's edges: names of every length up to 20 next to quotes, non-ASCII
// bytes, '#', '\r' and the end of the source, blank runs, punctuators,
// numbers, and slices that fill up (small capacities).
func TestRunMatchesNext(t *testing.T) {
	pieces := []string{"a", "ab", "abc", "abcd", "abcde", "x1_$Z", "int", "const", "template", "__launch_bounds__",
		"reinterpret_cast", "aaaaaaaaaaaaaaaaaaaa", "u8", "R", "L", "\"s\"", "'c'", "é", "\xff", "#", "#if 0\n", "#endif\n",
		" ", "  ", "\t", "\r", "\r\n", "\n", "\n    ", "(", ")", "[", "]", "{", "}", ";", ",", "?", "~", ".", "/", "%",
		"::", "++", "+=", "->", "<<<", ">>>", "<:", "%>", "<", ">", "=", "&", "|", "!", "*", "^", "-", ":",
		"0", "12", "0x1f", "1.5", "1e+5", "1'000", "//c\n", "/*c*/", "\\\n", "@", "`", "\x00",
		"\n        ", "\n          \t ", "\n   \r\n", "       "}
	rng := rand.New(rand.NewSource(1))
	var srcs []string
	for n := 0; n < 3000; n++ {
		var b strings.Builder
		for k := rng.Intn(40); k >= 0; k-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		srcs = append(srcs, b.String())
	}
	for _, w := range []string{"a", "abc", "abcd", "abcdefgh", "abcdefghi"} {
		for _, end := range []string{"", "\"", "'", "é", "\xff", "#", "\r", " ", "(", "0", "_"} {
			for pad := 0; pad < 6; pad++ {
				srcs = append(srcs, strings.Repeat(" ", pad)+w+end, strings.Repeat(" ", pad)+w+end+"xyz(")
			}
		}
	}
	for _, s := range srcs {
		src := []byte(s)
		for _, parse := range []bool{false, true} {
			var v1, v2 []ptok
			if parse {
				v1, v2 = make([]ptok, 0, 3), make([]ptok, 0, 3)
			}
			got, want := lexAll(src, v1), lexByNext(src, v2)
			for _, c := range []struct {
				what      string
				got, want any
			}{
				{"tokens", got.toks, want.toks}, {"view", got.view, want.view}, {"diags", got.diags, want.diags},
				{"directs", got.directs, want.directs}, {"digraphs", got.digraphs, want.digraphs},
				{"prescans", got.prescans, want.prescans},
			} {
				if !reflect.DeepEqual(c.got, c.want) && !(reflect.ValueOf(c.got).Len() == 0 && reflect.ValueOf(c.want).Len() == 0) {
					t.Fatalf("%q (view %v): %s differ:\n got %v\nwant %v", s, parse, c.what, fmt.Sprint(c.got), fmt.Sprint(c.want))
				}
			}
		}
	}
}

// TestSpacesEnd checks that blanksEnd after spacesEnd gives what blanksEnd
// alone gives, for runs of spaces and tabs of every length up to 20 before
// every kind of byte, near and at the end of the source.
func TestSpacesEnd(t *testing.T) {
	for n := 0; n <= 20; n++ {
		for _, blank := range []string{" ", "\t", "\v"} {
			for _, end := range []string{"", "x", "\r", "\r\n", "\n", " \t", "\t\r", "0", "\xff", "\x00"} {
				for tail := 0; tail <= 9; tail++ {
					s := "\n" + strings.Repeat(" ", n) + blank + strings.Repeat(" ", n/2) + end + strings.Repeat("y", tail)
					src := []byte(s)
					for i := 1; i < len(src); i++ {
						e1, cr1 := blanksEnd(src, i)
						e2, cr2 := blanksEnd(src, spacesEnd(src, i))
						if e1 != e2 || cr1 != cr2 {
							t.Fatalf("%q at %d: blanksEnd %d %v, after spacesEnd %d %v", s, i, e1, cr1, e2, cr2)
						}
					}
				}
			}
		}
	}
}
