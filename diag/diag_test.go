package diag

import "testing"

func TestWithoutNotes(t *testing.T) {
	ds := []Diagnostic{{Pos: 3, Severity: Note}, {Pos: 2, Severity: Error, Code: "E"}, {Pos: 1, Severity: Warning, Code: "W"}}
	got := WithoutNotes(ds)
	if len(got) != 2 || got[0].Code != "E" || got[1].Code != "W" {
		t.Errorf("WithoutNotes = %+v", got)
	}
	if len(ds) != 3 {
		t.Error("the input changed")
	}
	if WithoutNotes(nil) != nil {
		t.Error("nil in, nil out")
	}
}
