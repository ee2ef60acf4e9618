package parse

import "testing"

// TestTokIDs checks that every token id has a spelling and that the lexer's
// lookups (wordInfo, punctID) map each spelling back to its id, so that
// isK(id) means exactly "the token spells tokIDText[id]".
func TestTokIDs(t *testing.T) {
	for id := kwNone + 1; id < numTokIDs; id++ {
		w := tokIDText[id]
		if w == "" {
			t.Fatalf("token id %d has no spelling", id)
		}
		var got uint8
		if c := w[0]; c == '_' || c >= 'a' && c <= 'z' {
			_, got = wordInfo(w)
		} else {
			got = punctID(w)
		}
		if got != id {
			t.Errorf("%q: id %d, want %d", w, got, id)
		}
		toks := Lex([]byte(w))
		if len(toks) != 2 || toks[0].End != len(w) {
			t.Errorf("%q does not lex as one token", w)
		}
	}
}
