package parse

import (
	"os"
	"strings"
	"testing"
)

// TestTry prints dumps for snippets in $TRY (separated by ####) — a scratch tool.
func TestTry(t *testing.T) {
	for _, src := range strings.Split(os.Getenv("TRY"), "####") {
		if src == "" {
			continue
		}
		f := ParseFile("t.cu", []byte(src))
		for _, d := range f.Decls {
			t.Log(Dump(d))
		}
		for _, d := range f.Diags {
			t.Log(f.Src.Format(d), " :: ", src[d.Pos:min(d.End, d.Pos+50)])
		}
		if e := verify(f); e != "" {
			t.Log("VERIFY:", e)
		}
	}
}
