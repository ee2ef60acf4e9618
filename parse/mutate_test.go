package parse

import (
	"math/rand"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestMutations is a cheap, deterministic cousin of FuzzParse that runs
// under plain `go test`: it mutates corpus files at random (fixed seed) and
// checks each parse finishes promptly with its invariants intact. Set
// BAMGEN_MUTATE_SECONDS to run longer.
func TestMutations(t *testing.T) {
	budget := 1 * time.Second
	if s := os.Getenv("BAMGEN_MUTATE_SECONDS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			budget = time.Duration(n) * time.Second
		}
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
	deadline := time.Now().Add(budget)
	n := 0
	for time.Now().Before(deadline) {
		src := mutate(r, seeds)
		done := make(chan string, 1)
		go func() { done <- verify(ParseFile("h.cu", src)) }()
		select {
		case e := <-done:
			if e != "" {
				t.Fatalf("%s on input:\n%q", e, src)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("parse did not finish (input %d):\n%q", n, src)
		}
		n++
	}
	t.Logf("%d inputs", n)
}

// mutate returns a random corpus file with up to eight random edits:
// byte flips, deletions, truncations and splices from other files.
func mutate(r *rand.Rand, seeds [][]byte) []byte {
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
	return src
}
