package port

import (
	"strings"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
)

// Kernel versioning by placement. A ported kernel's body reads its arrays
// through bam::array, whose every access tests where the array lives (one
// uniform branch) and keeps the out-of-line miss path on the other side.
// That branch is cheap, but it stops the compiler from treating the access
// like the plain load it was: a loop bound read from an array is not
// hoisted, neighbouring reads are not merged, values are not kept in
// registers across accesses. When the data fits in GPU memory the port was
// up to 5.5x slower than the original for that reason (docs/benchmarks.md).
//
// So the port wraps each ported kernel's body in a generic lambda and calls
// it through bam::by_placement, which tests placement once at kernel entry:
//
//	__global__ void k(bam::array<const float> x, bam::array<float> y, int n)
//	{
//	    bam::by_placement([&](auto x, auto y) {
//	    ...the body, unchanged...
//	    }, x, y);
//	}
//
// When every array is direct (resident in GPU memory, or zero-copy host
// memory) the lambda runs over bam::direct_array views, plain pointers to
// the compiler; otherwise over the bam::arrays. The lambda's parameters
// shadow the kernel's, so the body's text does not change; [&] captures the
// other parameters and locals by reference, so assignments to them mean
// what they meant. The test reads kernel parameters only: it is uniform, and
// barriers in the body stay where they were.

// versionNote explains why a kernel keeps a single version.
type versionNote struct {
	at  parse.Node
	why string
}

func runVersions(c *portCtx) ([]diag.Diagnostic, []edit.Edit) {
	var diags []diag.Diagnostic
	var edits []edit.Edit
	if c.opts.SingleVersion {
		return nil, nil
	}
	for _, ps := range c.inPlace() {
		fn := ps.fn
		if !fn.IsKernel() || fn.Body == nil || alreadyVersioned(fn.Body) {
			continue
		}
		openAfter, note := versionPoint(fn)
		if note == nil {
			note = splitsConditional(c.src, fn.Body, openAfter)
		}
		if d, bad := c.unparsedFn(fn); bad {
			// The parser's idea of where the body ends may be wrong (a GNU
			// statement expression `({ ... })` ends it early).
			note = &versionNote{fn.Body, "its body has code the parser did not understand (" + c.parseErrorText(d) + "), so bamgen cannot tell where the body ends"}
		}
		if note != nil {
			diags = append(diags, diag.Diagnostic{Pos: note.at.Pos(), End: note.at.End(), Severity: diag.Note,
				Code: CodeSingleVersion, Message: fn.Name + ": compiled once, reading through bam::array only: " + note.why})
			continue
		}
		args := versionArgs(fn, ps.set)
		open, close := versionTexts("bam::by_placement", args)
		edits = append(edits, c.versionOpen(fn.Body, openAfter, open), c.versionClose(fn.Body, close))
		if cl, why := c.directClone(ps, openAfter, args); cl != nil {
			c.clones = append(c.clones, *cl)
		} else {
			c.noClones = append(c.noClones, NoClone{Kernel: fn.Name, Pos: fn.NameSpan.Start, End: fn.NameSpan.End(), Why: why})
		}
	}
	return diags, edits
}

// versionArg is one array a kernel's versions take: the parameter's name,
// and whether it was `const T* __restrict__` (its direct view then reads
// through the read-only data path, bam::read_only, as the original did).
type versionArg struct {
	name     string
	readOnly bool
}

func versionArgs(fn *parse.FuncDecl, set []int) []versionArg {
	out := make([]versionArg, 0, len(set))
	for _, idx := range set {
		t := fn.Params[idx].Type
		out = append(out, versionArg{fn.Params[idx].Name, t != nil && t.Const && t.Restrict && t.Pointers == 1})
	}
	return out
}

// versionTexts opens and closes the lambda a kernel's body goes in, called
// through fn (bam::by_placement, or bam::as_direct in a direct clone).
func versionTexts(fn string, args []versionArg) (open, close string) {
	names := make([]string, len(args))
	passed := make([]string, len(args))
	for i, a := range args {
		names[i], passed[i] = a.name, a.name
		if a.readOnly {
			passed[i] = "bam::read_only(" + a.name + ")"
		}
	}
	return fn + "([&](auto " + strings.Join(names, ", auto ") + ") {", "}, " + strings.Join(passed, ", ") + ");"
}

// alreadyVersioned reports whether the body already is a by_placement call
// (a file ported before): porting it again must change nothing.
func alreadyVersioned(body *parse.BlockStmt) bool {
	for _, s := range body.Stmts {
		if es, ok := s.(*parse.ExprStmt); ok {
			if call, ok := es.X.(*parse.CallExpr); ok && parse.ShortFuncName(call.Fun) == "by_placement" {
				return true
			}
		}
	}
	return false
}

// versionPoint returns the offset after which the lambda opens (the body's
// `{`, or the last of the __shared__ declarations it starts with, which stay
// outside: inside, each version would have its own copy), or why the kernel
// cannot be compiled twice.
func versionPoint(fn *parse.FuncDecl) (int, *versionNote) {
	openAfter := fn.Body.Pos() + 1
	leading := true
	for _, s := range fn.Body.Stmts {
		if leading && isStaticSharedDecl(s) {
			openAfter = s.End()
			continue
		}
		leading = false
	}
	var note *versionNote
	prefixEnd := openAfter
	parse.Inspect(fn.Body, func(n parse.Node) bool {
		if note != nil {
			return false
		}
		switch n := n.(type) {
		case *parse.VarDecl:
			if n.Pos() >= prefixEnd && hasSpec(n.Specifiers, "__shared__") && !hasSpec(n.Specifiers, "extern") {
				note = &versionNote{n, "it declares __shared__ memory after its first statement, and each version would have its own copy; declare __shared__ arrays at the top of the kernel"}
			}
		case *parse.Ident:
			switch n.Name {
			case "__func__", "__FUNCTION__", "__PRETTY_FUNCTION__":
				note = &versionNote{n, n.Name + " inside the versioned body would name the lambda, not the kernel"}
			}
		}
		return true
	})
	return openAfter, note
}

// splitsConditional returns why the lambda, from openAfter to the body's
// closing brace, cannot enclose a whole region of preprocessor
// conditionals: a body that starts with `#if __CUDA_ARCH__ >= 700` and its
// __shared__ declarations, and ends with `#endif`, would open the lambda
// inside the #if and close it outside, so a pass where the #if is false
// (the host pass) sees only the close (cuda-samples'
// globalToShmemAsyncCopy). nil when the directives in between are
// balanced.
func splitsConditional(src []byte, body *parse.BlockStmt, openAfter int) *versionNote {
	depth := 0
	for _, line := range strings.Split(string(src[openAfter:body.End()-1]), "\n") {
		t := strings.TrimLeft(line, " \t")
		if !strings.HasPrefix(t, "#") {
			continue
		}
		word := strings.Fields(strings.TrimLeft(t[1:], " \t") + " ")
		if len(word) == 0 {
			continue
		}
		switch {
		case strings.HasPrefix(word[0], "if"):
			depth++
		case word[0] == "endif" || word[0] == "else" || word[0] == "elif":
			if depth == 0 {
				return &versionNote{body, "a #" + word[0] + " in its body belongs to a conditional opened before the point where its versions would begin (after the leading __shared__ declarations), so the preprocessor would cut one version's braces"}
			}
			if word[0] == "endif" {
				depth--
			}
		}
	}
	if depth != 0 {
		return &versionNote{body, "a preprocessor conditional opened inside its body is not closed before the body ends"}
	}
	return nil
}

// isStaticSharedDecl reports whether s declares only __shared__ variables
// of static size (not `extern __shared__`, which both versions may share).
func isStaticSharedDecl(s parse.Stmt) bool {
	ds, ok := s.(*parse.DeclStmt)
	if !ok || ds.Record != nil || len(ds.Vars) == 0 {
		return false
	}
	for _, v := range ds.Vars {
		if !hasSpec(v.Specifiers, "__shared__") || hasSpec(v.Specifiers, "extern") || v.Init != nil {
			return false
		}
	}
	return true
}

func hasSpec(specs []string, want string) bool {
	for _, s := range specs {
		if s == want {
			return true
		}
	}
	return false
}

// versionOpen puts the lambda's opening on a line of its own after `after`
// (the `{` or the last leading __shared__ declaration) when only blanks or
// a comment follow it there, indented like the body; else on that line.
// It goes before any other insertion there: an access-pattern rewrite's
// own wrapper of the body must end up inside.
func (c *portCtx) versionOpen(body *parse.BlockStmt, after int, text string) edit.Edit {
	if next, ok := c.lineAfter(after); ok && next < body.End() {
		return edit.Edit{Start: next, End: next, New: c.bodyIndentOf(body) + text + "\n",
			Rewrite: Versions.String(), Encloses: edit.Opens}
	}
	return edit.Edit{Start: after, End: after, New: " " + text, Rewrite: Versions.String(), Encloses: edit.Opens}
}

// versionClose puts the lambda's end on a line of its own before the
// body's `}` when the `}` starts its line, else just before it; after any
// other insertion there.
func (c *portCtx) versionClose(body *parse.BlockStmt, text string) edit.Edit {
	rb := body.End() - 1
	if start, _, ok := c.lineBefore(rb); ok {
		return edit.Edit{Start: start, End: start, New: c.bodyIndentOf(body) + text + "\n",
			Rewrite: Versions.String(), Encloses: edit.Closes}
	}
	lead := " "
	if rb > 0 && (c.src[rb-1] == ' ' || c.src[rb-1] == '\t' || c.src[rb-1] == '\n') {
		lead = ""
	}
	return edit.Edit{Start: rb, End: rb, New: lead + text + " ", Rewrite: Versions.String(), Encloses: edit.Closes}
}

// bodyIndentOf is the indentation of the body's first statement when it
// starts its line, else four blanks more than the `{` line.
func (c *portCtx) bodyIndentOf(body *parse.BlockStmt) string {
	if len(body.Stmts) > 0 {
		if _, in, ok := c.lineBefore(body.Stmts[0].Pos()); ok {
			return in
		}
	}
	return c.indentAt(body.Pos()) + "    "
}
