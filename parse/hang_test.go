package parse

import (
	"math/rand"
	"os"
	"testing"
	"time"
)

func TestHang(t *testing.T) {
	if os.Getenv("HANG") == "" {
		t.Skip()
	}
	var seeds [][]byte
	for _, p := range corpusFiles(t) {
		b, _ := os.ReadFile(p)
		seeds = append(seeds, b)
	}
	for _, s := range fuzzSeeds {
		seeds = append(seeds, []byte(s))
	}
	r := rand.New(rand.NewSource(1))
	deadline := time.Now().Add(40 * time.Second)
	n := 0
	for time.Now().Before(deadline) {
		src := append([]byte(nil), seeds[r.Intn(len(seeds))]...)
		for k := r.Intn(8); k >= 0 && len(src) > 0; k-- {
			i := r.Intn(len(src))
			switch r.Intn(4) {
			case 0:
				src[i] = byte(r.Intn(256))
			case 1:
				j := i + r.Intn(len(src)-i)
				src = append(src[:i], src[j:]...)
			case 2:
				o := seeds[r.Intn(len(seeds))]
				if len(o) > 0 {
					a := r.Intn(len(o))
					b := a + r.Intn(min(64, len(o)-a))
					src = append(src[:i], append(append([]byte{}, o[a:b]...), src[i:]...)...)
				}
			case 3:
				src = src[:i]
			}
		}
		done := make(chan string, 1)
		go func() { done <- verify(ParseFile("h.cu", src)) }()
		select {
		case e := <-done:
			if e != "" {
				os.WriteFile("/tmp/bad.cu", src, 0o644)
				t.Fatalf("invariant: %s", e)
			}
		case <-time.After(3 * time.Second):
			os.WriteFile("/tmp/hang.cu", src, 0o644)
			t.Fatalf("hang after %d inputs, saved /tmp/hang.cu", n)
		}
		n++
	}
	t.Logf("%d inputs", n)
}
