package port

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bamgen/bamgen/parse"
)

// TestWalkSeesEveryExpression guards the rewrites against a blind spot: every
// expression and statement parse.Inspect reaches in the corpus (outside
// types, which hold no array uses) must also be reached by walk. A node kind
// the parser learns later and walk does not know would otherwise hide uses
// of an array from the port.
func TestWalkSeesEveryExpression(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/kernels/*/*.cu")
	extra, _ := filepath.Glob("../../parse/testdata/*.cu")
	for _, path := range append(files, extra...) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f := parse.ParseFile(path, src)
		walked := map[parse.Node]bool{}
		walk(f, func(n parse.Node, _ []parse.Node) bool { walked[n] = true; return true })
		parse.Inspect(f, func(n parse.Node) bool {
			switch n.(type) {
			case *parse.TypeRef:
				return false
			case parse.Expr, parse.Stmt:
				if !walked[n] {
					t.Errorf("%s: walk misses %T at offset %d: %q", path, n, n.Pos(), clip(string(src[n.Pos():n.End()])))
				}
			}
			return true
		})
	}
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
