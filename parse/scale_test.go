package parse

import (
	"bytes"
	"os"
	"testing"
	"time"
)

func TestScale(t *testing.T) {
	if os.Getenv("SCALE") == "" {
		t.Skip()
	}
	src, _ := os.ReadFile(os.Getenv("SCALE"))
	for _, n := range []int{1, 4, 16} {
		in := bytes.Repeat(src, n)
		st := time.Now()
		for i := 0; i < 5; i++ {
			ParseFile("x", in)
		}
		d := time.Since(st) / 5
		t.Logf("%dx %d bytes: %v  %.1f MB/s", n, len(in), d, float64(len(in))/d.Seconds()/1e6)
	}
}

func BenchmarkScale(b *testing.B) {
	src, _ := os.ReadFile(os.Getenv("SCALE"))
	in := bytes.Repeat(src, 16)
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		ParseFile("x", in)
	}
}
