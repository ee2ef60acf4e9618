package diag

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var codeRE = regexp.MustCompile(`^[A-Z]{2,8}[0-9]{3}$`)

func TestCodesTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Codes {
		if !codeRE.MatchString(c.ID) || c.Title == "" || seen[c.ID] {
			t.Errorf("bad or repeated entry %+v", c)
		}
		seen[c.ID] = true
	}
	if got := HelpURI("PORT010"); got != DocsURL+"#port010" {
		t.Errorf("HelpURI = %q", got)
	}
}

// Every code reported anywhere in bamgen's Go sources (a "CODE" string
// literal or a "[CODE]" in a message) is in Codes and has a section in
// docs/diagnostics.md, and the page documents no code that does not exist.
func TestEveryCodeDocumented(t *testing.T) {
	used := codesInSources(t, "..")
	if len(used) < 50 {
		t.Fatalf("found only %d codes in the sources; is the scan broken?", len(used))
	}
	page, err := os.ReadFile("../docs/diagnostics.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^### ([A-Z]{2,8}[0-9]{3})\s*$`).FindAllStringSubmatch(string(page), -1) {
		documented[m[1]] = true
	}
	inTable := map[string]bool{}
	for _, c := range Codes {
		inTable[c.ID] = true
	}
	for _, code := range sortedKeys(used) {
		if !inTable[code] {
			t.Errorf("%s (%s) is not in diag.Codes", code, used[code])
		}
		if !documented[code] {
			t.Errorf("%s (%s) has no '### %s' section in docs/diagnostics.md", code, used[code], code)
		}
	}
	for _, code := range sortedKeys(documented) {
		if used[code] == "" {
			t.Errorf("docs/diagnostics.md documents %s, which no source reports", code)
		}
	}
	for code := range inTable {
		if used[code] == "" {
			t.Errorf("diag.Codes lists %s, which no source reports", code)
		}
	}
}

// codesInSources maps each code found in non-test Go files under root
// (except this package's table) to the first file that has it.
func codesInSources(t *testing.T, root string) map[string]string {
	t.Helper()
	lit := regexp.MustCompile(`"([A-Z]{2,8}[0-9]{3})"|\[([A-Z]{2,8}[0-9]{3})\]`)
	used := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "build") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || filepath.ToSlash(p) == "../diag/codes.go" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range lit.FindAllStringSubmatch(string(b), -1) {
			code := m[1] + m[2]
			if used[code] == "" {
				used[code] = filepath.ToSlash(p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return used
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
