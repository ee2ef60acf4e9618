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
// or before the first of those lines that can bring in the program's own
// macros (a #define of an unreserved name, a #include "local" header),
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
	// The first top-level line that can define the program's own macros:
	// a #define other than a configuration macro (configMacro), or a
	// #include "local" header. The runtime comes before it, so that a
	// macro like cuda-samples stereoDisparity's `#define STEPS 3` does not
	// rewrite the identifiers of the runtime's headers (cub's STEPS).
	firstMacros := -1
	for i, d := range ds {
		if c.file.Tokens[d.tok].Start > code {
			break
		}
		top := depth == base && !(guard && (i < gOpen || i > gClose))
		switch d.name {
		case "if", "ifdef", "ifndef":
			depth++
		case "endif":
			depth--
		case "define":
			if top && firstMacros < 0 && !(guard && i == gOpen+1) && !configMacro(d.args) {
				firstMacros = c.file.Tokens[d.tok].Start
			}
		case "include":
			h := strings.Trim(d.args, "<>\" \t")
			if top {
				if firstMacros < 0 && strings.HasPrefix(d.args, "\"") {
					firstMacros = c.file.Tokens[d.tok].Start
				}
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
	switch {
	case at < 0:
		at = c.topOfFile(ds, gOpen, guard)
	case firstMacros >= 0 && firstMacros < at:
		at, _, _ = c.lineBefore(firstMacros) // a directive: only blanks precede it on its line
	default:
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

// configMacro reports whether a #define (its words after `define`) sets a
// configuration macro that headers read when they are included: a name
// reserved for the implementation (`_GNU_SOURCE`), NDEBUG, or one of the
// CUDA toolkit's libraries (THRUST_, CUB_, CUDA_, CCCL_, LIBCUDACXX_).
// Those stay before the runtime's include.
func configMacro(args string) bool {
	name := strings.FieldsFunc(args, func(r rune) bool { return r == ' ' || r == '\t' || r == '(' })
	if len(name) == 0 {
		return true
	}
	n := name[0]
	if strings.HasPrefix(n, "_") || n == "NDEBUG" {
		return true
	}
	for _, p := range []string{"THRUST_", "CUB_", "CUDA_", "CCCL_", "LIBCUDACXX_"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}
