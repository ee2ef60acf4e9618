package parse

import "testing"

// TestSpaceBefore checks spaceBefore's tables against its definition on
// every pair of bytes.
func TestSpaceBefore(t *testing.T) {
	p := &parser{}
	for _, inGroup := range []bool{false, true} {
		p.inGroup = inGroup
		for prev := range 256 {
			for c := range 256 {
				for n := 1; n <= 2; n++ {
					a, b := byte(prev), byte(c)
					want := isIdentChar(a) && isIdentChar(b) ||
						(b == '*' || b == '&') && (isIdentChar(a) || a == '>') ||
						(a == '*' || a == '&') && isIdentChar(b) ||
						a == ',' ||
						b == '(' && n == 1 && inGroup && isIdentChar(a)
					if got := p.spaceBefore(a, b, n); got != want {
						t.Fatalf("spaceBefore(%q, %q, %d) inGroup=%v = %v, want %v", a, b, n, inGroup, got, want)
					}
				}
			}
		}
	}
}
