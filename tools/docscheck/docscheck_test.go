// Package docscheck holds tests of the documentation's data: every data
// file docs/ names exists, every file in docs/data is listed (with the
// command that made it) in docs/data/README.md, and no raw console log is
// kept there (tables are kept as CSV, as docs/data/README.md says).
package docscheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const root = "../.."

// dataRef matches a path into docs/data as the docs write it: data/NAME or
// docs/data/NAME, NAME possibly with a {a,b} alternation.
var dataRef = regexp.MustCompile(`(?:docs/)?data/([A-Za-z0-9_.{},*-]+\.(?:csv|json|txt|log|png))`)

func markdownFiles(t *testing.T) []string {
	var files []string
	for _, pattern := range []string{"docs/*.md", "bench/*/*.md", "README.md"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 5 {
		t.Fatalf("found only %d Markdown files; run from tools/docscheck", len(files))
	}
	return files
}

// expand turns a{b,c}d into abd and acd (one alternation is all the docs use).
func expand(name string) []string {
	i := strings.Index(name, "{")
	j := strings.Index(name, "}")
	if i < 0 || j < i {
		return []string{name}
	}
	var out []string
	for _, alt := range strings.Split(name[i+1:j], ",") {
		out = append(out, expand(name[:i]+alt+name[j+1:])...)
	}
	return out
}

func TestDocsDataFilesExist(t *testing.T) {
	refs := 0
	for _, md := range markdownFiles(t) {
		text, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range dataRef.FindAllStringSubmatch(string(text), -1) {
			for _, name := range expand(m[1]) {
				if strings.Contains(name, "*") {
					matches, _ := filepath.Glob(filepath.Join(root, "docs/data", name))
					if len(matches) == 0 {
						t.Errorf("%s names %s, which matches no file in docs/data", md, m[0])
					}
					refs++
					continue
				}
				if _, err := os.Stat(filepath.Join(root, "docs/data", name)); err != nil {
					t.Errorf("%s names %s, which is not in docs/data: commit the data or mark the number unmeasured", md, m[0])
				}
				refs++
			}
		}
	}
	if refs < 10 {
		t.Errorf("only %d references to docs/data found; the pattern may have broken", refs)
	}
}

func TestDocsDataIndexedAndNoRawLogs(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join(root, "docs/data"))
	if err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(root, "docs/data/README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(string(index), -1) {
		for _, name := range strings.Split(m[1], ", ") {
			listed = append(listed, expand(name)...)
		}
	}
	for _, e := range entries {
		name := e.Name()
		if name == "README.md" || e.IsDir() {
			continue
		}
		switch filepath.Ext(name) {
		case ".txt", ".log":
			t.Errorf("docs/data/%s is a raw log; keep the table it gave as CSV instead", name)
		}
		found := false
		for _, l := range listed {
			if ok, _ := filepath.Match(l, name); ok || l == name || matchAlt(l, name) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("docs/data/%s is not listed in docs/data/README.md (what it is and the command that made it)", name)
		}
	}
}

// matchAlt matches names like trace-{bfs,cc}-odt-64M-h100*.csv after
// expansion, with * as a glob.
func matchAlt(pattern, name string) bool {
	for _, p := range expand(pattern) {
		if ok, _ := filepath.Match(p, name); ok {
			return true
		}
	}
	return false
}
