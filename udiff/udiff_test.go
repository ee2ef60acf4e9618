package udiff

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnifiedAppliesWithPatch checks the diff against patch(1): applying
// our diff to a must give b. Without patch it skips locally but fails under
// CI=true (.ci/install-deps.sh installs it), so CI cannot skip it silently.
func TestUnifiedAppliesWithPatch(t *testing.T) {
	patch, err := exec.LookPath("patch")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("patch not installed; CI needs it (.ci/install-deps.sh installs it)")
		}
		t.Skip("patch not installed")
	}
	cases := [][2]string{
		{"a\nb\nc\n", "a\nB\nc\n"},
		{"", "x\n"},
		{"x\n", ""},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "0\n1\n2\n3\nfour\n5\n6\n7\n8\n9\n10\n11\n12\n13\n"},
		{"a\nb", "a\nc"},
		{strings.Repeat("l\n", 50) + "x\n" + strings.Repeat("m\n", 50), strings.Repeat("l\n", 50) + "y\nz\n" + strings.Repeat("m\n", 49)},
	}
	for i, c := range cases {
		dir := t.TempDir()
		f := filepath.Join(dir, "f")
		os.WriteFile(f, []byte(c[0]), 0o644)
		d := Unified("f", "f", []byte(c[0]), []byte(c[1]))
		cmd := exec.Command(patch, "-s", f)
		cmd.Stdin = strings.NewReader(string(d))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("case %d: patch: %v\n%s\ndiff:\n%s", i, err, out, d)
		}
		got, _ := os.ReadFile(f)
		if string(got) != c[1] {
			t.Errorf("case %d: patched = %q, want %q\ndiff:\n%s", i, got, c[1], d)
		}
	}
	if Unified("a", "b", []byte("x"), []byte("x")) != nil {
		t.Error("equal inputs must give no diff")
	}
}
