package parse

import (
	"bytes"
	"os"
	"testing"
)

// TestCorpusStats prints per-file counts and every Opaque node of the
// corpus (BAMGEN_PARSE_STATS=1 go test -run TestCorpusStats -v .), to review
// what the parser keeps without understanding.
func TestCorpusStats(t *testing.T) {
	if os.Getenv("BAMGEN_PARSE_STATS") == "" {
		t.Skip()
	}
	for _, path := range corpusFiles(t) {
		src, _ := os.ReadFile(path)
		f := ParseFile(path, src)
		launches := len(f.Launches())
		want := bytes.Count(src, []byte("<<<"))
		t.Logf("%s: funcs=%d kernels=%d launches=%d/%d", path, len(f.Funcs()), len(f.Kernels()), launches, want)
		Inspect(f, func(n Node) bool {
			switch n := n.(type) {
			case *Opaque:
				t.Logf("  opaque %q: %.60q", n.Reason, f.Text(n))
			case *OpaqueStmt:
				t.Logf("  opaque-stmt %q: %.60q", n.Reason, f.Text(n))
			case *OpaqueExpr:
				t.Logf("  opaque-expr %q: %.60q", n.Reason, f.Text(n))
			}
			return true
		})
	}
}
