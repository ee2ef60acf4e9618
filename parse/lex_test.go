package parse

import (
	"fmt"
	"strings"
	"testing"
)

func lexKinds(src string) string {
	var parts []string
	for _, t := range Lex([]byte(src)) {
		if t.Kind == EOF {
			break
		}
		if t.Kind == Whitespace {
			parts = append(parts, "ws:") // blanks would be unreadable
			continue
		}
		parts = append(parts, kindName[t.Kind]+":"+src[t.Start:t.End])
	}
	return strings.Join(parts, " ")
}

var kindName = map[TokenKind]string{
	Invalid: "bad", Whitespace: "ws", Newline: "nl", Continuation: "cont", LineComment: "lc",
	BlockComment: "bc", Directive: "pp", Inactive: "off", Identifier: "id", Number: "num",
	Char: "chr", String: "str", Punct: "p", EOF: "eof",
}

func expectLex(t *testing.T, src, want string) {
	t.Helper()
	if got := lexKinds(src); got != want {
		t.Errorf("lex %q\n got: %s\nwant: %s", src, got, want)
	}
	expectRoundTrip(t, src)
}

func expectRoundTrip(t testing.TB, src string) {
	t.Helper()
	toks := Lex([]byte(src))
	var b strings.Builder
	prev := 0
	for _, tk := range toks {
		if tk.Start != prev || tk.End < tk.Start {
			t.Fatalf("lex %q: token gap/overlap at %d", src, tk.Start)
		}
		prev = tk.End
		b.WriteString(src[tk.Start:tk.End])
	}
	if b.String() != src {
		t.Fatalf("lex %q: round trip failed", src)
	}
	if last := toks[len(toks)-1]; last.Kind != EOF || last.Start != len(src) || last.End != len(src) {
		t.Fatalf("lex %q: missing final EOF", src)
	}
}

func TestLexNumbers(t *testing.T) {
	expectLex(t, "0x1Fu 0b1010 0777 1'000'000 1.5e-3f 0x1.8p+3 .5 1e10L 42ull 12_km 1.f",
		"num:0x1Fu ws: num:0b1010 ws: num:0777 ws: num:1'000'000 ws: num:1.5e-3f ws: num:0x1.8p+3 ws: num:.5 ws: num:1e10L ws: num:42ull ws: num:12_km ws: num:1.f")
	expectLex(t, "a-1", "id:a p:- num:1")
	expectLex(t, "x.y", "id:x p:. id:y")
}

func TestLexStrings(t *testing.T) {
	expectLex(t, `"a\"b" 'c' '\n' u8"x" u"y" U'z' L"w"`,
		`str:"a\"b" ws: chr:'c' ws: chr:'\n' ws: str:u8"x" ws: str:u"y" ws: chr:U'z' ws: str:L"w"`)
	expectLex(t, `R"(a)b")"`, `str:R"(a)b")"`)
	expectLex(t, `R"xy(a)"b)xy" u8R"(q)"`, `str:R"xy(a)"b)xy" ws: str:u8R"(q)"`)
	expectLex(t, "R\"(multi\nline)\"", "str:R\"(multi\nline)\"")
	expectLex(t, `"abc"_s`, `str:"abc"_s`)
	expectLex(t, "\"unterminated\nx", "str:\"unterminated nl:\n id:x")
	expectLex(t, "u8 x", "id:u8 ws: id:x")
}

func TestLexPunct(t *testing.T) {
	expectLex(t, "a::b->*c<<<d>>>e<=>f...g", "id:a p::: id:b p:->* id:c p:<<< id:d p:>>> id:e p:<=> id:f p:... id:g")
	expectLex(t, "<: :> <% %> %: %:%:", "p:<: ws: p::> ws: p:<% ws: p:%> ws: p:%: ws: p:%:%:")
	expectLex(t, "std::vector<::T>", "id:std p::: id:vector p:< p::: id:T p:>")
	expectLex(t, "a<::>b", "id:a p:<: p::> id:b")
	expectLex(t, "x<<=1>>=2", "id:x p:<<= num:1 p:>>= num:2")
	expectLex(t, "a->b.c++--", "id:a p:-> id:b p:. id:c p:++ p:--")
}

func TestLexTrivia(t *testing.T) {
	expectLex(t, "a // c\n/* b\n */ b", "id:a ws: lc:// c nl:\n bc:/* b\n */ ws: id:b")
	expectLex(t, "a \\\nb", "id:a ws: cont:\\\n id:b")
	expectLex(t, "// x \\\n still comment\ny", "lc:// x \\\n still comment nl:\n id:y")
	expectLex(t, "a\r\nb", "id:a nl:\r\n id:b")
	expectLex(t, "#define X(a) \\\n  (a + 1)\nX(2)", "pp:#define X(a) \\\n  (a + 1) nl:\n id:X p:( num:2 p:)")
	expectLex(t, "  # pragma unroll\nx", "ws: pp:# pragma unroll nl:\n id:x")
	expectLex(t, "a # b", "id:a ws: p:# ws: id:b")
}

func TestLexConditionals(t *testing.T) {
	expectLex(t, "#ifdef A\nx\n#else\ny\n#endif\n", "pp:#ifdef A nl:\n id:x nl:\n pp:#else nl:\n off:y\n pp:#endif nl:\n")
	expectLex(t, "#if 0\nx\n#else\ny\n#endif", "pp:#if 0 nl:\n off:x\n pp:#else nl:\n id:y nl:\n pp:#endif")
	expectLex(t, "#if 0\n#if 1\nx\n#endif\n#elif B\ny\n#else\nz\n#endif",
		"pp:#if 0 nl:\n off:#if 1\nx\n#endif\n pp:#elif B nl:\n id:y nl:\n pp:#else nl:\n off:z\n pp:#endif")
	expectLex(t, "#if X\na\n#elif Y\nb\n#elif Z\nc\n#endif", "pp:#if X nl:\n id:a nl:\n pp:#elif Y nl:\n off:b\n pp:#elif Z nl:\n off:c\n pp:#endif")
	expectLex(t, "#if 0 /* off */\nit's\n#endif", "pp:#if 0 /* off */ nl:\n off:it's\n pp:#endif")
	expectLex(t, "#if 0\n/*\n#endif\n*/\n#endif\nx", "pp:#if 0 nl:\n off:/*\n#endif\n*/\n pp:#endif nl:\n id:x")
	expectLex(t, "#if 0\nx", "pp:#if 0 nl:\n off:x")
}

func TestLexErrors(t *testing.T) {
	for _, c := range []struct{ src, code string }{
		{"/* open", "PARSE001"},
		{"\"open", "PARSE002"},
		{"R\"x(open", "PARSE002"},
		{"a @ b", "PARSE004"},
		{"a \x00 b", "PARSE004"},
		{"a \xff\xfe b", "PARSE005"},
		{"#endif", "PARSE006"},
		{"#if X\n", "PARSE006"},
	} {
		toks, diags := LexDiags([]byte(c.src))
		_ = toks
		found := false
		for _, d := range diags {
			found = found || d.Code == c.code
		}
		if !found {
			t.Errorf("lex %q: want %s, got %v", c.src, c.code, diags)
		}
		expectRoundTrip(t, c.src)
	}
}

func TestLexRoundTripJunk(t *testing.T) {
	for _, src := range []string{
		"", "\\", "\\\r", "'", "\"", "R\"", "R\"(", "u8'", "#", "#if", "#if 0", "#else\n#elif",
		"/*", "*/", "/", "0x", "1e", "1e+", ".", "..", "<", "<:", "<::", "%:%", "\r", "\r\r\n",
		"\xff", "\xc3", "é = 1;", "a\x00\x01\x02b", "\"\\", "'\\", "#define A \\", "#if 0\n#if 0\n",
		"R\"abcdefghijklmnopqrstuvwxyz(x)abcdefghijklmnopqrstuvwxyz\"",
	} {
		expectRoundTrip(t, src)
	}
}

// TestLineEndContinuations checks lineEnd's IndexByte search against the
// byte-by-byte definition on every start offset of inputs full of
// backslashes, '\r' and '\n'.
func TestLineEndContinuations(t *testing.T) {
	ref := func(src []byte, i int) int {
		for i < len(src) {
			switch {
			case src[i] == '\\' && i+1 < len(src) && src[i+1] == '\n':
				i += 2
			case src[i] == '\\' && i+2 < len(src) && src[i+1] == '\r' && src[i+2] == '\n':
				i += 3
			case src[i] == '\n', src[i] == '\r' && i+1 < len(src) && src[i+1] == '\n':
				return i
			default:
				i++
			}
		}
		return i
	}
	alphabet := []byte("a\\\r\n")
	for n := 0; n <= 6; n++ {
		src := make([]byte, n)
		total := 1
		for k := 0; k < n; k++ {
			total *= len(alphabet)
		}
		for code := 0; code < total; code++ {
			c := code
			for k := range src {
				src[k] = alphabet[c%len(alphabet)]
				c /= len(alphabet)
			}
			l := &lexer{src: string(src)}
			for i := 0; i <= n; i++ {
				if got, want := l.lineEnd(i), ref(src, i); got != want {
					t.Fatalf("lineEnd(%q, %d) = %d, want %d", src, i, got, want)
				}
			}
		}
	}
}

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
