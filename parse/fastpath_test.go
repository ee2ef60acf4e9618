package parse

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

// treeHash hashes everything parseFile returns, as TestEquivalence does.
func treeHash(f *File) string {
	h := sha256.New()
	bw := bufio.NewWriter(h)
	s := &serializer{w: bw, seen: map[ptrKey]int{}}
	s.value(reflect.ValueOf(f))
	bw.Flush()
	return hex.EncodeToString(h.Sum(nil))
}

// TestFastPathsAgree checks that the parser's fast paths (leaf, plainName,
// the one-identifier member, the plain declarator and abstract
// declarator, one-word type texts, appendPlain, skipWordArgs) give
// exactly what the general path gives: the whole tree, spans, texts,
// scopes, diagnostics and pointer sharing, on every equivalence input
// (the corpus, its truncations and mutations, token soups).
func TestFastPathsAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	failed := 0
	for _, in := range equivInputs(t) {
		fast, general := parseFile("x.cu", in.src, false), parseFile("x.cu", in.src, true)
		if treeHash(fast) != treeHash(general) {
			failed++
			if failed <= 10 {
				t.Errorf("%s: the fast paths give another tree than the general path", in.name)
			}
		}
	}
}

// TestLeafDeclinesSpecialWords checks that every word the general path
// treats specially (reserved words, operator and expression words,
// __alignof) parses the same with and without the fast paths in every
// operand position; leaf must leave them all to the general path.
func TestLeafDeclinesSpecialWords(t *testing.T) {
	words := []string{"__alignof"}
	for w := range reservedWords {
		words = append(words, w)
	}
	for _, w := range words {
		src := strings.ReplaceAll("void f(int x) { y = W; y = W(1); y = W[2]; W.a; W->b; g(W, W); y = x + W; return W; }\n", "W", w)
		fast, general := parseFile("x.cu", []byte(src), false), parseFile("x.cu", []byte(src), true)
		if a, b := Dump(fast), Dump(general); a != b || treeHash(fast) != treeHash(general) {
			t.Errorf("%q: fast %s\ngeneral %s", w, a, b)
		}
	}
}
