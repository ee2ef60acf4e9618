package port

import (
	"strings"

	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
)

// runtimeHeaders are the headers the inserted host code needs, the
// runtime's last.
var runtimeHeaders = []string{"cstdio", "cstring", "utility", "vector", "bam/bam.cuh"}

// directive is one preprocessor line: its token index, name (`include`,
// `ifdef`, ...) and the words after the name.
type directive struct {
	tok  int
	name string
	args string
}

func (c *source) directives() []directive {
	var out []directive
	for i, t := range c.file.Tokens {
		if t.Kind != parse.Directive {
			continue
		}
		s := strings.TrimSpace(string(c.src[t.Start:t.End]))
		s = strings.TrimSpace(strings.TrimPrefix(s, "#"))
		name := s
		for j, r := range s {
			if !(r >= 'a' && r <= 'z') {
				name = s[:j]
				break
			}
		}
		out = append(out, directive{tok: i, name: name, args: strings.TrimSpace(s[len(name):])})
	}
	return out
}

// includeGuard reports whether the file's conditional directives start
// with an include guard (`#ifndef X` / `#define X` as the first code, its
// `#endif` the last): lines inside it count as top level.
func (c *source) includeGuard(ds []directive) (open, close int, ok bool) {
	toks := c.file.Tokens
	first := -1
	for i, t := range toks {
		if t.Kind == parse.Whitespace || t.Kind == parse.Newline || t.Kind == parse.LineComment || t.Kind == parse.BlockComment {
			continue
		}
		if t.Kind == parse.Directive && strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(c.src[t.Start:t.End])), "#")), "pragma") {
			continue
		}
		first = i
		break
	}
	if len(ds) < 3 {
		return 0, 0, false
	}
	k := -1
	for i, d := range ds {
		if d.tok == first {
			k = i
		}
	}
	if k < 0 || k+1 >= len(ds) || ds[k].name != "ifndef" || ds[k+1].name != "define" ||
		strings.Fields(ds[k+1].args + " x")[0] != ds[k].args {
		return 0, 0, false
	}
	depth := 0
	for i := k; i < len(ds); i++ {
		switch ds[i].name {
		case "if", "ifdef", "ifndef":
			depth++
		case "endif":
			depth--
			if depth == 0 {
				for _, t := range toks[ds[i].tok+1:] {
					switch t.Kind {
					case parse.Whitespace, parse.Newline, parse.LineComment, parse.BlockComment, parse.EOF:
					default:
						return 0, 0, false
					}
				}
				return k, i, true
			}
		}
	}
	return 0, 0, false
}

// includeEdit inserts the headers the port needs (those the file does not
// include yet) after the last #include outside any #if block (an include
// guard does not count) that comes before the file's first declaration,
// or, with none, at the top of the file after its
// leading comments, `#pragma once` and include guard. A #line directive
// follows, so later lines keep their numbers. A file with no host edit
// (kernelsOnly) needs only the runtime header.
func (c *portCtx) includeEdit(kernelsOnly bool) (edit.Edit, bool) {
	ds := c.directives()
	gOpen, gClose, guard := c.includeGuard(ds)
	base := 0
	if guard {
		base = 1
	}
	// Only includes before the first declaration count: the runtime must be
	// declared before any code that uses bam::array.
	code := len(c.src)
	for _, t := range c.file.Tokens {
		if !t.Kind.IsTrivia() && t.Kind != parse.EOF {
			code = t.Start
			break
		}
	}
	have := map[string]bool{}
	at, depth := -1, 0
	for i, d := range ds {
		if c.file.Tokens[d.tok].Start > code {
			break
		}
		switch d.name {
		case "if", "ifdef", "ifndef":
			depth++
		case "endif":
			depth--
		case "include":
			h := strings.Trim(d.args, "<>\" \t")
			if depth == base && !(guard && (i < gOpen || i > gClose)) {
				at = c.file.Tokens[d.tok].End
				have[h] = true
			} else if depth == 0 {
				have[h] = true
			}
		}
	}
	var text strings.Builder
	for _, h := range runtimeHeaders {
		if !have[h] && (!kernelsOnly || h == "bam/bam.cuh") {
			text.WriteString("#include <" + h + ">\n")
		}
	}
	if text.Len() == 0 {
		return edit.Edit{}, false
	}
	if at < 0 {
		at = c.topOfFile(ds, gOpen, guard)
	} else {
		at = lineEnd(c.src, at)
	}
	s := text.String()
	if at > 0 && c.src[at-1] != '\n' { // the include was the last line, with no newline
		s = "\n" + s
	}
	return edit.Edit{Start: at, End: at, New: s, Rewrite: Runtime.String(), Reline: true}, true
}

// topOfFile returns the start of the line after the file's leading
// comments, `#pragma once` lines and include guard opening.
func (c *portCtx) topOfFile(ds []directive, gOpen int, guard bool) int {
	skip := map[int]bool{}
	for i, d := range ds {
		if d.name == "pragma" && strings.HasPrefix(d.args, "once") || guard && (i == gOpen || i == gOpen+1) {
			skip[d.tok] = true
		}
	}
	at := 0
	for i, t := range c.file.Tokens {
		switch {
		case t.Kind == parse.Whitespace || t.Kind == parse.Newline:
		case t.Kind == parse.LineComment || t.Kind == parse.BlockComment || skip[i]:
			at = t.End
		default:
			if at == 0 {
				return 0
			}
			return lineEnd(c.src, at)
		}
	}
	return lineEnd(c.src, at)
}
