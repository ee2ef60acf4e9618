// Package edit holds byte edits on a file's original bytes and applies
// them. Every stage that changes a file (the port, the access-pattern
// rewrites) returns edits; the pipeline (package transform) applies a
// file's edits once, at the end. (The port also applies edits to a copy
// of a helper's text to build a clone, which it then inserts as one edit.)
// It is a leaf package: it imports only the standard library.
package edit

import (
	"fmt"
	"sort"
)

// Edit replaces the original bytes [Start, End) with New. Edits always refer
// to the original file, never to the output of another edit, so rewrites can
// run independently and in any order; Apply checks that they do not collide.
type Edit struct {
	Start, End int
	New        string
	// Rewrite names the rewrite that produced the edit, so an invalid edit
	// can be blamed on its author (it is a bug in bamgen, not in the input).
	Rewrite string
	// Reline says the edit inserts whole lines (cloned helpers, the
	// runtime include): it must end at the start of a line, and Apply
	// rejects it otherwise. (Apply numbers the lines after any edit that
	// changes the line count, Reline or not: see ApplyLines.)
	Reline bool
	// Follows says an insertion of whole lines at the start of a line
	// adds a statement after the one on the line before: its first line
	// shows that line (a `#line` directive gives it that line's number,
	// so an error in it, and __LINE__, name the statement it follows);
	// its other lines show no original line.
	Follows bool
	// Encloses marks an insertion that must enclose the other insertions
	// at its offset: Opens goes before them, Closes after them. Kernel
	// versioning wraps a body in `bam::by_placement(...) {` and `}, ...);`
	// while an access-pattern rewrite adds its own lines at the same two
	// places, and those must end up inside.
	Encloses Side
	// Repeats says the inserted whole lines repeat, line for line, the
	// original lines from the one holding offset RepeatsAt (a kernel's
	// direct clone): each shows that original line, so a compiler error in
	// the copy names the line it copies. An edit that is not whole lines
	// (it starts inside a line, or its text goes on into the original text
	// after it) repeats from its second line: line j of its text shows the
	// original line j after the one holding RepeatsAt, except its first and
	// last lines, which show the lines the edit starts and ends on (a
	// launch copied into the line of the launch it precedes: `if (c) {
	// copy } else {` NEWLINE `launch`).
	Repeats   bool
	RepeatsAt int
}

// Side says which end of an enclosing pair an insertion is (Edit.Encloses).
type Side int

const (
	Inside Side = iota // an ordinary edit
	Opens              // goes first among the insertions at its offset
	Closes             // goes last among the insertions at its offset
)

// EditError reports an edit that cannot be applied; it is always a bamgen bug.
type EditError struct {
	Rewrite string
	Edit    Edit
	Reason  string
}

func (e *EditError) Error() string {
	return fmt.Sprintf("internal error: rewrite %q produced an invalid edit [%d,%d): %s", e.Rewrite, e.Edit.Start, e.Edit.End, e.Reason)
}

// Apply returns src with every edit applied. Edits must lie inside src and
// must not overlap (two insertions at the same offset are kept in the order
// given, which is deterministic because rewrites run in a fixed order).
// With a fileName, a `#line` directive naming it follows every edit that
// changes the number of lines, so compile errors in the rest of the output
// still point at original lines (see ApplyLines); with "" none is written.
func Apply(src []byte, edits []Edit, fileName string) ([]byte, error) {
	out, _, err := ApplyLines(src, edits, fileName)
	return out, err
}

// ApplyLines is Apply, also returning the line map of the output: which
// original line each output line shows (Lines). It is computed from the
// edits, never by comparing texts, and it is what --line-directives reads.
func ApplyLines(src []byte, edits []Edit, fileName string) ([]byte, Lines, error) {
	sorted := append([]Edit(nil), edits...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Start != sorted[j].Start {
			return sorted[i].Start < sorted[j].Start
		}
		if sorted[i].End != sorted[j].End {
			return sorted[i].End < sorted[j].End
		}
		return enclosingRank(sorted[i]) < enclosingRank(sorted[j])
	})
	if err := checkEdits(src, sorted); err != nil {
		return nil, nil, err
	}
	var b lineBuilder
	b.src = src
	b.starts = lineStarts(src)
	b.out.Grow(len(src) + len(src)/8)
	last := 0
	for _, e := range sorted {
		b.copySrc(last, e.Start)
		b.insert(e)
		last = e.End
	}
	b.copySrc(last, len(src))
	if fileName == "" {
		return b.out.Bytes(), b.origins, nil
	}
	out, lines := withDirectives(b.out.Bytes(), b.origins, fileName, false)
	return out, lines, nil
}

// checkEdits validates sorted edits: in range, ordered, not overlapping,
// and relining edits ending at a line start.
// enclosingRank orders insertions at one offset: an opening first, the
// ordinary ones in the order given, a closing last.
func enclosingRank(e Edit) int {
	switch e.Encloses {
	case Opens:
		return 0
	case Closes:
		return 2
	}
	return 1
}

func checkEdits(src []byte, sorted []Edit) error {
	prevEnd := 0
	for i, e := range sorted {
		switch {
		case e.Start < 0 || e.End > len(src) || e.Start > e.End:
			return &EditError{e.Rewrite, e, fmt.Sprintf("range outside the file (size %d)", len(src))}
		case i > 0 && e.Start < prevEnd:
			return &EditError{e.Rewrite, e, fmt.Sprintf("overlaps an edit of rewrite %q ending at %d", sorted[i-1].Rewrite, prevEnd)}
		case e.Reline && e.End > 0 && src[e.End-1] != '\n':
			return &EditError{e.Rewrite, e, "a #line directive must follow a whole line"}
		}
		prevEnd = e.End
	}
	return nil
}

// Span is a byte range [Start, End) of the original file; Start == End is
// an insertion point.
type Span struct{ Start, End int }

// Spans returns the ranges the edits change, in the order given.
func Spans(edits []Edit) []Span {
	out := make([]Span, len(edits))
	for i, e := range edits {
		out[i] = Span{e.Start, e.End}
	}
	return out
}

// Touches reports whether a span changes bytes in [start, end): it
// overlaps the range, or it is an insertion strictly inside it.
func Touches(spans []Span, start, end int) bool {
	for _, s := range spans {
		if s.Start < end && start < s.End || s.Start == s.End && start < s.Start && s.Start < end {
			return true
		}
	}
	return false
}

// Within returns the text of src[start:end] after the edits that fall
// inside it (insertions at either boundary belong to the surroundings and
// are left out). When the edits inside cannot be applied the original
// text is returned.
func Within(src []byte, edits []Edit, start, end int) string {
	var inner []Edit
	for _, e := range edits {
		if e.Start >= start && e.End <= end && !(e.Start == e.End && (e.Start == start || e.Start == end)) {
			inner = append(inner, Edit{Start: e.Start - start, End: e.End - start, New: e.New, Rewrite: e.Rewrite})
		}
	}
	out, err := Apply(src[start:end], inner, "")
	if err != nil {
		return string(src[start:end])
	}
	return string(out)
}
