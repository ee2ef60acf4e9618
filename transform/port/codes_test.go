package port

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryCodeIsTestedAndDocumented keeps codes.go, the golden cases and
// docs/port.md in step: a code nobody can trigger or look up is a bug.
func TestEveryCodeIsTestedAndDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/port.md")
	if err != nil {
		t.Fatal(err)
	}
	var goldens strings.Builder
	files, _ := filepath.Glob("../../testdata/port/*.txtar")
	programs, _ := filepath.Glob("../../testdata/program/*.txtar") // whole-program cases (PORT040)
	withOpt, _ := filepath.Glob("../../testdata/opt/*.txtar")      // codes only a rewrite brings out (PORT057)
	files = append(files, programs...)
	files = append(files, withOpt...)
	for _, f := range files {
		b, _ := os.ReadFile(f)
		goldens.Write(b)
	}
	src, _ := os.ReadFile("codes.go")
	for _, line := range strings.Split(string(src), "\n") {
		i := strings.Index(line, `"PORT`)
		if i < 0 {
			continue
		}
		code := line[i+1 : i+8]
		if !strings.Contains(string(doc), code) {
			t.Errorf("%s is not documented in docs/port.md", code)
		}
		if !strings.Contains(goldens.String(), "["+code+"]") {
			t.Errorf("%s is not exercised by any testdata/port case", code)
		}
	}
}
