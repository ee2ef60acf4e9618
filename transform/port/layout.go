package port

import (
	"strings"

	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
)

// Layout of the statements the port inserts (runtime checks, the prologue
// of a function, plan_arrays, the declaration before a mode switch): each
// goes on a line of its own, indented like the statement it follows or
// precedes, where that statement ends (or starts) its line; otherwise it
// shares the statement's line as before. A line inserted this way is a
// whole line: one put before a statement shows no original line (the
// compiler numbers it as the statement's line, and a #line directive
// renumbers the statement); one put after a statement shows the
// statement's last line (edit.Edit.Follows: a #line directive before it,
// so `check_sync(__FILE__, __LINE__)` names the synchronization's line as
// on the same line, and another after it).

// lineAfter returns the start of the line after the one where a statement
// ending at end ends, when the rest of that line holds only blanks or a //
// comment.
func (c *source) lineAfter(end int) (int, bool) {
	src := c.src
	i := end
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\r') {
		i++
	}
	if i+1 < len(src) && src[i] == '/' && src[i+1] == '/' {
		for i < len(src) && src[i] != '\n' {
			i++
		}
		if src[i-1] == '\\' { // the comment goes on to the next line
			return 0, false
		}
	}
	if i < len(src) && src[i] == '\n' {
		return i + 1, true
	}
	return 0, false
}

// lineBefore returns the start of the line a statement starting at pos
// starts, and its indentation, when only blanks precede it on that line.
func (c *source) lineBefore(pos int) (int, string, bool) {
	i := pos
	for i > 0 && (c.src[i-1] == ' ' || c.src[i-1] == '\t') {
		i--
	}
	if i == 0 || c.src[i-1] == '\n' {
		return i, string(c.src[i:pos]), true
	}
	return 0, "", false
}

// indentAt is the indentation of the line holding pos.
func (c *source) indentAt(pos int) string {
	i := pos
	for i > 0 && c.src[i-1] != '\n' {
		i--
	}
	return leadingBlanksOf(string(c.src[i:pos]))
}

// insertAfter puts text (one statement) after s: on a line of its own when
// s ends its line, else right after it on its line. braces: s is the
// unbraced body of an if/else/for/while (parent), which then gets braces
// around s and the new statement.
func (c *source) insertAfter(s, parent parse.Node, text string, braces bool, rewrite string) []edit.Edit {
	next, ownEnd := c.lineAfter(s.End())
	start, indent, ownStart := c.lineBefore(s.Pos())
	if !braces && ownEnd {
		return []edit.Edit{{Start: next, End: next, New: c.indentAt(s.Pos()) + text + "\n", Rewrite: rewrite, Follows: true}}
	}
	if braces && ownEnd && ownStart && parent != nil {
		outer := c.indentAt(parent.Pos())
		return []edit.Edit{
			{Start: start, End: start, New: outer + "{\n", Rewrite: rewrite},
			{Start: next, End: next, New: indent + text + "\n" + outer + "}\n", Rewrite: rewrite, Follows: true},
		}
	}
	if braces {
		return []edit.Edit{
			{Start: s.Pos(), End: s.Pos(), New: "{ ", Rewrite: rewrite},
			{Start: s.End(), End: s.End(), New: " " + text + " }", Rewrite: rewrite},
		}
	}
	return []edit.Edit{{Start: s.End(), End: s.End(), New: " " + text, Rewrite: rewrite}}
}

// insertBefore puts text (one statement) before s: on a line of its own
// when s starts its line, else right before it on its line.
func (c *source) insertBefore(s parse.Node, text string, rewrite string) edit.Edit {
	if start, indent, ok := c.lineBefore(s.Pos()); ok {
		return edit.Edit{Start: start, End: start, New: indent + text + "\n", Rewrite: rewrite}
	}
	return edit.Edit{Start: s.Pos(), End: s.Pos(), New: text + " ", Rewrite: rewrite}
}

// insertAtTop puts statements at the top of a function body: on lines of
// their own after the `{` when the `{` ends its line, indented like the
// body's first statement (or four blanks more than the `{` line), else
// right after the `{`.
func (c *source) insertAtTop(body *parse.BlockStmt, text string, rewrite string) edit.Edit {
	open := body.Pos() + 1
	if next, ok := c.lineAfter(open); ok && next < body.End() {
		indent := c.indentAt(body.Pos()) + "    "
		if len(body.Stmts) > 0 {
			if _, in, ok := c.lineBefore(body.Stmts[0].Pos()); ok {
				indent = in
			}
		}
		return edit.Edit{Start: next, End: next, New: indent + text + "\n", Rewrite: rewrite}
	}
	return edit.Edit{Start: open, End: open, New: " " + text, Rewrite: rewrite}
}

// followedBy reports whether the runtime call fn already follows s, on its
// line or on the next line (past a #line directive): a file ported before.
func (c *source) followedBy(s parse.Node, fn string) bool {
	calls := func(line string) bool {
		line = strings.TrimSpace(line)
		return strings.HasPrefix(line, rtName+"."+fn+"(") || strings.HasPrefix(line, "bam::default_runtime()."+fn+"(")
	}
	line, rest, more := strings.Cut(string(c.src[s.End():]), "\n")
	if calls(line) || !more || strings.TrimSpace(line) != "" && !strings.HasPrefix(strings.TrimSpace(line), "//") {
		return calls(line)
	}
	for {
		line, rest, more = strings.Cut(rest, "\n")
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "#line ") || !more {
			break
		}
	}
	return calls(line)
}
