package parse

import "testing"

// TestStartsDeclKeyword checks startsDeclKeyword, which tests token ids,
// against the keywords it stands for, spelled out: the lexer gives each
// keyword the id of its reservedWords entry (TestTokIDs).
func TestStartsDeclKeyword(t *testing.T) {
	want := map[string]bool{}
	for _, w := range []string{"const", "volatile", "auto", "struct", "class", "union", "enum", "typename", "decltype",
		"__restrict__", "alignas", "__attribute__", "__align__", "__typeof__", "typeof"} {
		want[w] = true
	}
	for w := range keywords {
		e, ok := reservedWords[w]
		if !ok || e.cls&clsKeyword == 0 {
			t.Fatalf("%q: no keyword class", w)
		}
		if got := startsDeclKeyword(e.kw); got != want[w] {
			t.Errorf("startsDeclKeyword(%q) = %v, want %v", w, got, want[w])
		}
	}
	for w := range want {
		if !keywords[w] {
			t.Errorf("%q is no keyword", w)
		}
	}
}
