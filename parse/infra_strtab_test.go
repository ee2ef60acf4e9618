package parse

import (
	"math/rand"
	"strings"
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

// TestStrIndexCollisions adds names that all start probing at slot 0 of a
// 64-slot table: the first maxProbe fill slots, the rest go to over, and
// every one is still found.
func TestStrIndexCollisions(t *testing.T) {
	var names []string
	for a := 'a'; a <= 'z' && len(names) < 24; a++ {
		for b := 'a'; b <= 'z' && len(names) < 24; b++ {
			for c := 'a'; c <= 'z' && len(names) < 24; c++ {
				for d := 'a'; d <= 'z' && len(names) < 24; d++ {
					s := string([]rune{a, b, c, d})
					ka, kb := strKey(s)
					if strSlotHash(ka, kb, len(s))&63 == 0 {
						names = append(names, s)
					}
				}
			}
		}
	}
	var x strIndex
	for i, s := range names {
		if k := x.add(s); k != i {
			t.Fatalf("add(%q) = %d, want %d", s, k, i)
		}
	}
	if len(x.slots) != 64 || len(x.over) != len(names)-maxProbe {
		t.Fatalf("%d slots, %d keys in over; want 64 and %d", len(x.slots), len(x.over), len(names)-maxProbe)
	}
	for i, s := range names {
		if k := x.find(s); k != i {
			t.Fatalf("find(%q) = %d, want %d", s, k, i)
		}
		if k := x.find(strings.ToUpper(s)); k != -1 {
			t.Fatalf("find(%q) = %d, want -1", strings.ToUpper(s), k)
		}
	}
}
