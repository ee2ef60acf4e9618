package runtime

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

func TestABIVersion(t *testing.T) {
	v, err := ABIVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v < 1 {
		t.Fatalf("ABI version %d, want >= 1", v)
	}
	for _, tc := range []struct {
		text string
		want int
		ok   bool
	}{
		{"#define BAM_ABI_VERSION 7\n", 7, true},
		{"// #define BAM_ABI_VERSION 3\n#define BAM_ABI_VERSION 12\n", 12, true},
		{"#define BAM_ABI_VERSION\n", 0, false},
		{"#define BAM_ABI_VERSION v2\n", 0, false},
	} {
		got, err := abiVersion(fstest.MapFS{"include/bam/version.h": {Data: []byte(tc.text)}})
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("abiVersion(%q) = %d, %v; want %d, ok=%v", tc.text, got, err, tc.want, tc.ok)
		}
	}
	if _, err := abiVersion(fstest.MapFS{}); err == nil {
		t.Error("abiVersion without version.h: no error")
	}
}

// Every runtime file opens namespace bam through BAM_NAMESPACE_BEGIN, so
// that all its symbols carry the ABI version; a bare `namespace bam {`
// would put declarations outside it and let a skew link silently.
func TestVersionedNamespace(t *testing.T) {
	bare := regexp.MustCompile(`(?m)^\s*namespace\s+bam\s*\{`)
	n := 0
	err := fs.WalkDir(Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == "include/bam/version.h" || !(strings.HasSuffix(p, ".h") || strings.HasSuffix(p, ".cuh") ||
			strings.HasSuffix(p, ".cpp") || strings.HasSuffix(p, ".cu")) {
			return err
		}
		b, err := fs.ReadFile(Files(), p)
		if err != nil {
			return err
		}
		if loc := bare.FindIndex(b); loc != nil {
			line := 1 + strings.Count(string(b[:loc[0]]), "\n")
			t.Errorf("%s:%d: opens namespace bam directly; use BAM_NAMESPACE_BEGIN/END from <bam/version.h>", p, line)
		}
		if strings.Contains(string(b), "BAM_NAMESPACE_BEGIN") {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Errorf("only %d runtime files use BAM_NAMESPACE_BEGIN", n)
	}
}
