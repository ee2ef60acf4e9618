package main

import (
	"strings"
	"testing"
)

const profile = `mode: set
example.com/m/a/x.go:1.1,2.2 3 1
example.com/m/a/x.go:3.1,4.2 1 0
example.com/m/a/x.go:3.1,4.2 1 1
example.com/m/b/y.go:1.1,2.2 4 0
example.com/m/b/y.go:3.1,4.2 1 1
`

func TestMergeAndThresholds(t *testing.T) {
	blocks, err := read(strings.NewReader(profile))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	// a: 4/4 (a block run by any binary counts), b: 1/5.
	if code := report(&out, blocks, 50, pkgFlags{}); code != 1 {
		t.Errorf("b at 20%% under a 50%% minimum: exit %d, want 1\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "example.com/m/a") || !strings.Contains(out.String(), "100.0%") ||
		!strings.Contains(out.String(), " 20.0%") || !strings.Contains(out.String(), "total") {
		t.Errorf("report:\n%s", out.String())
	}
	out.Reset()
	if code := report(&out, blocks, 50, pkgFlags{"m/b": 10}); code != 0 {
		t.Errorf("b's own minimum 10%%: exit %d, want 0\n%s", code, out.String())
	}
	out.Reset()
	if code := report(&out, blocks, 0, pkgFlags{"m/zzz": 10}); code != 1 {
		t.Errorf("a -pkg matching nothing must fail: exit %d\n%s", code, out.String())
	}
}

func TestBadProfile(t *testing.T) {
	if _, err := read(strings.NewReader("mode: set\nx.go:1.1,2.2 three 1\n")); err == nil {
		t.Error("a malformed line was accepted")
	}
}
