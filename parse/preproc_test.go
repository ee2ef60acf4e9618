package parse

import (
	"reflect"
	"strings"
	"testing"
)

// TestCollectMacrosRepeated checks collectMacros (Macros from a slab) and
// the macroDef values against the definition: every #define parsed and learnt in order into
// fresh maps (what collectMacros did before), on sources with repeated,
// redefined, continued and back-to-an-earlier-text #defines.
func TestCollectMacrosRepeated(t *testing.T) {
	srcs := []string{
		"#define A 1\n#define A 1\n#define A 2\n#define A 1\n",
		"#define HD __host__ __device__\n#define HD __host__ __device__\n#define HD\n#define HD __host__ __device__\n",
		"#define LB __launch_bounds__(256)\n#define LB 3\n#define LB __launch_bounds__(256)\n#define LB __launch_bounds__(256)\n",
		"#define R __restrict__\n#define R __restrict__\n#define T float\n#define T float\n#define T int *\n",
		"#define F(a, b) ((a) + \\\n (b))\n#define F(a, b) ((a) + \\\n (b))\n#define F(a,b) x\n#define F(a, b) ((a) + \\\n (b))\n",
		"#define FO\\\nO 1\n#define FO\\\nO 1\n#define FOO 1\n#define FO\\\nO 2\n",
		"#define \\\n X 1\n#define \\\n X 1\n#define X 1\n",
		"#define U if (lane == 0)\n#define U if (lane == 0)\n#define U _Pragma(\"unroll\")\n#define U if (lane == 0)\n",
		"#define E\n#define E\n#define E /* c */\n#define E\n#define\n#define 1\n#undef E\n#define E\n",
	}
	for _, src := range srcs {
		f := ParseFile("m.cu", []byte(src))
		l := lexAll(src, nil)
		p := newParser(&File{Src: f.Src, Tokens: l.toks}, src)
		p.toks, p.directs = l.view, l.directs
		p.collectMacros()

		// The reference: each #define parsed and learnt afresh.
		ref := newParser(&File{Src: f.Src, Tokens: l.toks}, src)
		var refMacros []Macro
		defs := map[string]*macroDef{}
		for _, k := range l.directs {
			tok := l.toks[k]
			n, rest := directiveNameAt(ref.src, tok.Start, tok.End)
			if string(ref.src[n:rest]) != "define" {
				continue
			}
			var m Macro
			if !defineText(ref.src[rest:tok.End], tok, &m) {
				continue
			}
			refMacros = append(refMacros, m)
			d := defs[m.Name]
			if d == nil {
				d = &macroDef{}
				defs[m.Name] = d
			}
			d.m = &m
			ref.learnMacro(&m, d)
		}

		if len(p.file.Macros) != len(refMacros) {
			t.Fatalf("%q: %d macros, want %d", src, len(p.file.Macros), len(refMacros))
		}
		for i, m := range p.file.Macros {
			if !reflect.DeepEqual(*m, refMacros[i]) {
				t.Errorf("%q: macro %d = %+v, want %+v", src, i, *m, refMacros[i])
			}
		}
		if len(p.macroDefs) != len(defs) {
			t.Errorf("%q: %d macro names, want %d", src, len(p.macroDefs), len(defs))
		}
		if !reflect.DeepEqual(p.types.idx.keys, ref.types.idx.keys) || !reflect.DeepEqual(p.types.m, ref.types.m) {
			t.Errorf("%q: types %v, want %v", src, p.types.idx.keys, ref.types.idx.keys)
		}
		for name, d := range defs {
			got := p.macroDefOf(name)
			if got == nil || !reflect.DeepEqual(*got.m, *d.m) || got.attr != d.attr || !reflect.DeepEqual(got.spec, d.spec) {
				t.Errorf("%q: macroDef of %s = %+v, want %+v", src, name, got, d)
			}
		}
	}
}

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

// TestJoinContinuations checks joinContinuations against its definition
// (two strings.ReplaceAll passes) on every string of up to 8 bytes over
// "\\\r\na".
func TestJoinContinuations(t *testing.T) {
	const alpha = "\\\r\na"
	var walk func(b []byte)
	walk = func(b []byte) {
		want := strings.ReplaceAll(strings.ReplaceAll(string(b), "\\\r\n", ""), "\\\n", "")
		if got := joinContinuations(string(b)); got != want {
			t.Fatalf("joinContinuations(%q) = %q, want %q", b, got, want)
		}
		if len(b) == 8 {
			return
		}
		for i := range len(alpha) {
			walk(append(b, alpha[i]))
		}
	}
	walk(nil)
}
