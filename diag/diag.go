// Package diag holds the diagnostics every bamgen stage reports and prints
// them the way compilers do: "file:line:col: severity: message [CODE]".
//
// Positions are byte offsets into the file's original bytes; line and column
// are computed only when a diagnostic is printed (esbuild's habit), so stages
// never pay for positions nobody looks at.
package diag

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"unicode/utf8"
)

// Severity orders how bad a diagnostic is.
type Severity int

const (
	Note Severity = iota
	Warning
	Error
)

func (s Severity) String() string {
	switch s {
	case Note:
		return "note"
	case Warning:
		return "warning"
	default:
		return "error"
	}
}

// MarshalText makes severities print as words in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads the words back, so that Go tools can decode the
// JSON reports with the types that wrote them.
func (s *Severity) UnmarshalText(b []byte) error {
	for _, v := range []Severity{Note, Warning, Error} {
		if string(b) == v.String() {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("unknown severity %q; want note, warning or error", b)
}

// Diagnostic is one message about a byte range of one file.
// Code is stable across releases (tools match on it); Message says what is
// wrong and how to fix it.
type Diagnostic struct {
	Pos, End int
	Severity Severity
	Code     string
	Message  string
}

// Source is a file's name and bytes, with a lazily built line table.
type Source struct {
	Name  string
	Bytes []byte
	lines []int // offsets of line starts, built on first use
}

// NewSource wraps a file's bytes for position lookups.
func NewSource(name string, b []byte) *Source { return &Source{Name: name, Bytes: b} }

// LineCol returns the 1-based line and column (in UTF-8 characters, tabs
// counted as one) of byte offset off. Offsets past the end clamp to the end.
func (s *Source) LineCol(off int) (line, col int) {
	if s.lines == nil {
		s.lines = append(s.lines, 0)
		for i, c := range s.Bytes {
			if c == '\n' {
				s.lines = append(s.lines, i+1)
			}
		}
	}
	if off < 0 {
		off = 0
	}
	if off > len(s.Bytes) {
		off = len(s.Bytes)
	}
	i := sort.Search(len(s.lines), func(i int) bool { return s.lines[i] > off }) - 1
	start := s.lines[i]
	return i + 1, utf8.RuneCount(s.Bytes[start:off]) + 1
}

// Format renders d as "file:line:col: severity: message [CODE]".
func (s *Source) Format(d Diagnostic) string {
	line, col := s.LineCol(d.Pos)
	code := ""
	if d.Code != "" {
		code = " [" + d.Code + "]"
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s%s", s.Name, line, col, d.Severity, d.Message, code)
}

// JSON is the documented machine-readable form of a diagnostic
// (docs/json.md): positions both as byte offsets and as line/column.
type JSON struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Col      int      `json:"col"`
	EndLine  int      `json:"end_line"`
	EndCol   int      `json:"end_col"`
	Offset   int      `json:"offset"`
	EndOff   int      `json:"end_offset"`
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
}

// ToJSON converts d for JSON output.
func (s *Source) ToJSON(d Diagnostic) JSON {
	l, c := s.LineCol(d.Pos)
	el, ec := s.LineCol(d.End)
	return JSON{File: s.Name, Line: l, Col: c, EndLine: el, EndCol: ec, Offset: d.Pos, EndOff: d.End,
		Severity: d.Severity, Code: d.Code, Message: d.Message}
}

// Print writes each diagnostic on its own line, sorted by position.
func (s *Source) Print(w io.Writer, ds []Diagnostic) {
	for _, d := range Sorted(ds) {
		fmt.Fprintln(w, s.Format(d))
	}
}

// Sorted returns ds ordered by position, then code, without changing ds.
func Sorted(ds []Diagnostic) []Diagnostic {
	out := append([]Diagnostic(nil), ds...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Pos != out[j].Pos {
			return out[i].Pos < out[j].Pos
		}
		return out[i].Code < out[j].Code
	})
	return out
}

// WithoutNotes returns ds without its notes (-q), keeping the order.
func WithoutNotes(ds []Diagnostic) []Diagnostic {
	var out []Diagnostic
	for _, d := range ds {
		if d.Severity != Note {
			out = append(out, d)
		}
	}
	return out
}

// HasErrors reports whether any diagnostic is an error.
func HasErrors(ds []Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// MarshalList encodes diagnostics of one source as a JSON array.
func (s *Source) MarshalList(ds []Diagnostic) ([]byte, error) {
	out := make([]JSON, 0, len(ds))
	for _, d := range Sorted(ds) {
		out = append(out, s.ToJSON(d))
	}
	return json.MarshalIndent(out, "", "  ")
}
