// Package corpussync keeps the golden archives that copy a corpus program
// (testdata/port and testdata/opt archives whose comment names
// testdata/kernels/NAME/NAME.cu) equal to that program, so a change to the
// corpus cannot leave its golden behind unnoticed. It has no code, only
// this test; it lives outside the stage packages so that it keeps working
// when they move.
package corpussync

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"golang.org/x/tools/txtar"
)

const root = "../.."

var corpusRef = regexp.MustCompile(`testdata/kernels/[A-Za-z0-9_]+/[A-Za-z0-9_]+\.cu`)

func TestGoldenCopiesMatchCorpus(t *testing.T) {
	var archives []string
	for _, dir := range []string{"testdata/port", "testdata/opt"} {
		m, err := filepath.Glob(filepath.Join(root, dir, "*.txtar"))
		if err != nil {
			t.Fatal(err)
		}
		archives = append(archives, m...)
	}
	checked := 0
	for _, file := range archives {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		// Only the first line of the comment says what the input is a copy of.
		first, _, _ := bytes.Cut(ar.Comment, []byte("\n"))
		src := corpusRef.Find(first)
		if src == nil {
			continue
		}
		var input []byte
		found := false
		for _, f := range ar.Files {
			if f.Name == "input.cu" {
				input, found = f.Data, true
			}
		}
		if !found {
			t.Errorf("%s: names %s but has no input.cu section", file, src)
			continue
		}
		want, err := os.ReadFile(filepath.Join(root, string(src)))
		if err != nil {
			t.Errorf("%s: names %s: %v", file, src, err)
			continue
		}
		if !bytes.Equal(input, want) {
			t.Errorf("%s: input.cu differs from %s; copy the program in and accept the new output "+
				"(go test ./transform/... -update, or -run TestOptGolden -update for testdata/opt)", file, src)
		}
		checked++
	}
	if checked < 10 {
		t.Errorf("only %d archives name a corpus program; expected the corpus_* goldens (at least 10)", checked)
	}
}
