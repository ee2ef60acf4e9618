package transform

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/transform/port"
)

// benchInput builds a realistic ~100 KB translation unit: the corpus
// programs, each kernel and main renamed per copy so the copies do not
// collide, repeated until the size is reached.
func benchInput(tb testing.TB, size int) []byte {
	files, _ := filepath.Glob("../testdata/kernels/*/*.cu")
	var progs [][]byte
	for _, f := range files {
		if filepath.Base(filepath.Dir(f)) == "stress" {
			continue
		}
		b, err := os.ReadFile(f)
		if err == nil {
			progs = append(progs, b)
		}
	}
	if len(progs) == 0 {
		tb.Skip("no corpus programs in testdata/kernels")
	}
	var out bytes.Buffer
	for copyN := 0; out.Len() < size; copyN++ {
		for _, p := range progs {
			out.Write(renameFuncs(p, copyN))
			if out.Len() >= size {
				break
			}
		}
	}
	return out.Bytes()
}

// renameFuncs appends _N to every function defined in src.
func renameFuncs(src []byte, n int) []byte {
	f := parse.ParseFile("x.cu", src)
	for _, fd := range f.Funcs() {
		if fd.Body == nil {
			continue
		}
		re := regexp.MustCompile(`\b` + regexp.QuoteMeta(fd.Name) + `\b`)
		src = re.ReplaceAll(src, []byte(fmt.Sprintf("%s_%d", fd.Name, n)))
	}
	return src
}

// BenchmarkPort measures the whole port of ~100 KB: parse, --auto analysis,
// planning, rewrites and applying the edits. Bar: < 20 ms per 100 KB.
func BenchmarkPort(b *testing.B) {
	src := benchInput(b, 100<<10)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		f := parse.ParseFile("bench.cu", src)
		res, err := RunParsed(f, Options{Port: port.Options{Auto: true}})
		if err != nil || !res.Changed {
			b.Fatalf("port failed: %v", err)
		}
	}
}

// BenchmarkPortOnly is BenchmarkPort without parsing: analysis, planning,
// rewrites and Apply on an already parsed file (Port does not modify it).
func BenchmarkPortOnly(b *testing.B) { benchParsedPort(b, Options{Port: port.Options{Auto: true}}) }

// benchParsedPort ports an already parsed 100 KB input with opts.
func benchParsedPort(b *testing.B, opts Options) {
	src := benchInput(b, 100<<10)
	f := parse.ParseFile("bench.cu", src)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := RunParsed(f, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseOnly is the parser's share, for comparison.
func BenchmarkParseOnly(b *testing.B) {
	src := benchInput(b, 100<<10)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		parse.ParseFile("bench.cu", src)
	}
}

// BenchmarkPortRef is BenchmarkPortOnly with --ref: the cost of finding
// scans and checking the array_ref rules.
func BenchmarkPortRef(b *testing.B) {
	benchParsedPort(b, Options{Port: port.Options{Auto: true, Ref: true}})
}
