package parse

import (
	"math/rand"
	"testing"
)

// TestStrIndex checks strIndex against a Go map on names of every length
// (the key words spell keys of up to 16 bytes; longer ones hash and
// compare) and on misses that differ from a key in one byte.
func TestStrIndex(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var x strIndex
	m := map[string]int{}
	const alpha = "ab_Z09"
	for range 3000 {
		b := make([]byte, r.Intn(40))
		for i := range b {
			b[i] = alpha[r.Intn(len(alpha))]
		}
		s := string(b)
		k, ok := m[s]
		if got := x.find(s); ok && got != k || !ok && got != -1 {
			t.Fatalf("find(%q) = %d before add, want %d (%v)", s, got, k, ok)
		}
		if !ok {
			m[s] = x.add(s)
		}
	}
	for s, k := range m {
		if got := x.find(s); got != k || x.keys[k] != s {
			t.Fatalf("find(%q) = %d, want %d", s, got, k)
		}
		for i := range len(s) {
			u := s[:i] + "#" + s[i+1:]
			if got := x.find(u); got != -1 {
				t.Fatalf("find(%q) = %d, want -1", u, got)
			}
		}
		if got := x.find(s + "x"); got != -1 && x.keys[got] != s+"x" {
			t.Fatalf("find(%q) = %d (%q)", s+"x", got, x.keys[got])
		}
	}
}

// TestWordClass checks the reserved-word table against the maps it is
// built from.
func TestWordClass(t *testing.T) {
	for w := range keywords {
		if wordClassOf(w)&clsKeyword == 0 {
			t.Errorf("%s: not a keyword", w)
		}
	}
	for w := range specifierWords {
		if wordClassOf(w)&clsSpec == 0 {
			t.Errorf("%s: not a specifier", w)
		}
	}
	for w := range builtinTypeWords {
		if wordClassOf(w)&clsBuiltin == 0 {
			t.Errorf("%s: not a builtin type", w)
		}
	}
	for _, w := range []string{"x", "i", "threadIdx", "kernel", "float4", "iff", "int_", "_"} {
		if c := wordClassOf(w); c != 0 {
			t.Errorf("%s: class %d", w, c)
		}
	}
}
