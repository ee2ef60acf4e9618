package inline

import (
	"strings"

	"github.com/bamgen/bamgen/parse"
)

// siteOf returns the replacement of statement n of fn when n calls a
// wrapper in one of the forms Find accepts.
func siteOf(pf *parse.File, fn *parse.FuncDecl, ws map[string]*wrapper, n parse.Node) (Site, bool) {
	var call *parse.CallExpr
	target, decl := "", ""
	status := false
	switch s := n.(type) {
	case *parse.CallExpr: // a status wrapper's call, wherever it is
		call, status = s, true
	case *parse.ExprStmt:
		switch x := parse.Unparen(s.X).(type) {
		case *parse.CallExpr:
			call = x
		case *parse.BinaryExpr: // p = alloc<T>(n);
			id, isID := parse.Unparen(x.X).(*parse.Ident)
			c, isCall := parse.Unparen(x.Y).(*parse.CallExpr)
			if x.Op != "=" || !isID || !isCall {
				return Site{}, false
			}
			call, target = c, id.Name
		}
	case *parse.DeclStmt: // T *p = alloc<T>(n);
		if s.Record != nil || len(s.Vars) != 1 {
			return Site{}, false
		}
		v := s.Vars[0]
		c, isCall := parse.Unparen(v.Init).(*parse.CallExpr)
		if !isCall || len(v.Specifiers) > 0 || v.Type == nil || v.Type.Pointers != 1 || strings.HasSuffix(v.Type.Text, "const") {
			return Site{}, false
		}
		call, target, decl = c, v.Name, string(pf.Src.Bytes[s.Pos():v.NameSpan.Stop])+"; "
	}
	if call == nil {
		return Site{}, false
	}
	w := ws[parse.FuncName(call.Fun)]
	if w == nil || w.fn == fn || w.status != status || (w.allocVar != "") != (target != "") || len(call.Args) != len(w.fn.Params) {
		return Site{}, false
	}
	body, ok := instantiate(pf, fn, w, call, target, n.Pos())
	if !ok || hasTrivia(pf, n, parse.Directive, parse.Inactive) {
		return Site{}, false
	}
	text := string(pf.Src.Bytes[n.Pos():n.End()])
	return Site{
		Start: n.Pos(), End: n.End(),
		Text:    decl + body + strings.Repeat("\n", strings.Count(text, "\n")),
		Wrapper: w.fn.Name, API: w.api,
		Call: oneLine(string(pf.Src.Bytes[call.Pos():call.End()])),
	}, true
}

// instantiate returns w's statement with call's arguments (and target for
// an allocating wrapper) in place of the parameters, or false when the
// call does not allow it.
func instantiate(pf *parse.File, caller *parse.FuncDecl, w *wrapper, call *parse.CallExpr, target string, at int) (string, bool) {
	subst := map[string]string{}
	for i, p := range w.fn.Params {
		a := call.Args[i]
		if !parse.SideEffectFree(a) {
			return "", false
		}
		subst[p.Name] = argText(pf, a)
	}
	if target != "" {
		subst[w.allocVar] = target
	}
	types, ok := templateArgs(pf, caller, w, call)
	if !ok {
		return "", false
	}
	for k, v := range types {
		subst[k] = v
	}
	var b strings.Builder
	prevSignificant := ""
	for _, t := range tokensIn(pf, w.body.Pos(), w.body.End()) {
		text := string(pf.Src.Bytes[t.Start:t.End])
		switch t.Kind {
		case parse.Newline, parse.Continuation:
			b.WriteByte(' ')
			continue
		case parse.LineComment:
			continue // a // comment would swallow the rest of the line
		case parse.Identifier:
			qualified := prevSignificant == "." || prevSignificant == "->" || prevSignificant == "::"
			if v, isParam := subst[text]; isParam && !qualified {
				text = v
			} else if !qualified && caller.Scope.Lookup(text, at) != nil {
				return "", false // the caller has a local of that name: the body would mean something else there
			}
		}
		if !t.Kind.IsTrivia() {
			prevSignificant = text
		}
		b.WriteString(text)
	}
	return b.String(), true
}

// templateArgs maps w's template parameters to the call's types: the
// explicit arguments (`alloc<float>(n)`), else each deduced from a `T *`
// parameter whose argument is a variable declared `U *`, or a `T **` one
// given `&d` for such a variable (T is U).
func templateArgs(pf *parse.File, caller *parse.FuncDecl, w *wrapper, call *parse.CallExpr) (map[string]string, bool) {
	out := map[string]string{}
	if ti, ok := parse.Unparen(call.Fun).(*parse.TemplateIdent); ok {
		if len(ti.Args) > len(w.tparams) {
			return nil, false
		}
		for i, a := range ti.Args {
			out[w.tparams[i]] = string(pf.Src.Bytes[a.Pos():a.End()])
		}
	}
	for _, tp := range w.tparams {
		if _, given := out[tp]; given {
			continue
		}
		for i, p := range w.fn.Params {
			if p.Type.Base != tp || p.Type.Pointers < 1 || p.Type.Pointers > 2 {
				continue
			}
			arg := parse.Unparen(call.Args[i])
			if u, isAddr := arg.(*parse.UnaryExpr); isAddr && p.Type.Pointers == 2 && u.Op == "&" && !u.Postfix {
				arg = parse.Unparen(u.X) // T **p given &d, d a U *: T is U
			} else if p.Type.Pointers == 2 {
				continue
			}
			id, ok := arg.(*parse.Ident)
			if !ok {
				continue
			}
			sym := caller.Scope.Lookup(id.Name, id.Pos())
			if sym == nil || sym.Type == nil || sym.Type.Pointers != 1 || len(sym.Type.Array) > 0 {
				continue
			}
			base := sym.Type.Base
			if sym.Type.Const && !p.Type.Const {
				base = "const " + base
			}
			out[tp] = base
			break
		}
		if _, deduced := out[tp]; !deduced {
			return nil, false
		}
	}
	return out, true
}

// argText is an argument as it goes into the body: a name or literal as
// written, anything else parenthesised.
func argText(pf *parse.File, a parse.Expr) string {
	text := oneLine(string(pf.Src.Bytes[a.Pos():a.End()]))
	switch parse.Unparen(a).(type) {
	case *parse.Ident, *parse.BasicLit:
		if _, isParen := a.(*parse.ParenExpr); !isParen {
			return text
		}
	}
	return "(" + text + ")"
}

// oneLine joins a multi-line text with single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Mapping relates positions in the text Apply made to the source's.
type Mapping struct {
	sites []placed
}

// placed is a site's span in the source and in the new text.
type placed struct {
	srcStart, srcEnd int
	newStart, newEnd int
}

// Apply replaces each site of src (sorted, not overlapping) by its Text.
func Apply(src []byte, sites []Site) ([]byte, Mapping) {
	var out []byte
	var m Mapping
	last := 0
	for _, s := range sites {
		out = append(out, src[last:s.Start]...)
		p := placed{srcStart: s.Start, srcEnd: s.End, newStart: len(out)}
		out = append(out, s.Text...)
		p.newEnd = len(out)
		m.sites = append(m.sites, p)
		last = s.End
	}
	return append(out, src[last:]...), m
}

// Back maps a position of the new text to the source: a position inside a
// replaced statement goes to that statement's start (or its end, for the
// replacement's end).
func (m Mapping) Back(pos int) int {
	shift := 0
	for _, p := range m.sites {
		switch {
		case pos < p.newStart:
			return pos - shift
		case pos == p.newEnd:
			return p.srcEnd
		case pos < p.newEnd:
			return p.srcStart
		}
		shift = p.newEnd - p.srcEnd
	}
	return pos - shift
}

// Touched returns the indexes of the sites that an edit of the new text
// in [start, end) overlaps, or touches at an end.
func (m Mapping) Touched(start, end int) []int {
	var out []int
	for i, p := range m.sites {
		if start <= p.newEnd && end >= p.newStart {
			out = append(out, i)
		}
	}
	return out
}
