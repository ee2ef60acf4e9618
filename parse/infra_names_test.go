package parse

import (
	"strings"
	"testing"
)

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
