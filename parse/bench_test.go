package parse

import (
	"bytes"
	"os"
	"testing"
)

// benchInput concatenates the corpus (realistic kernels and host code)
// until it is about 2 MB, so that timings reflect real files, not a
// cache-resident toy.
func benchInput(b *testing.B) []byte { return benchInputT(b) }

func benchInputT(b testing.TB) []byte {
	var parts [][]byte
	for _, path := range corpusFiles(b) {
		if src, err := os.ReadFile(path); err == nil {
			parts = append(parts, src)
		}
	}
	if len(parts) == 0 {
		b.Skip("no corpus")
	}
	var buf bytes.Buffer
	for buf.Len() < 2<<20 {
		for _, p := range parts {
			buf.Write(p)
			buf.WriteByte('\n')
		}
	}
	return buf.Bytes()
}

func BenchmarkLex(b *testing.B) {
	src := benchInput(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Lex(src)
	}
}

func BenchmarkParse(b *testing.B) {
	src := benchInput(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ParseFile("bench.cu", src)
	}
}
