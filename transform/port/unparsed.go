package port

import (
	"fmt"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/parse"
)

// unparsed is source the parser did not understand: a function whose body
// has parse errors (bamgen never edits it), or the line of a parse error
// outside any function.
type unparsed struct {
	fn         *parse.FuncDecl // nil outside functions
	start, end int             // the body, or the line
	err        diag.Diagnostic // the first parse error in it
}

func (u unparsed) Pos() int { return u.start }
func (u unparsed) End() int { return u.end }

// unparsedRegions lists the regions with parse errors, in source order.
func (c *portCtx) unparsedRegions() []unparsed {
	if c.unparsedDone {
		return c.unparsedList
	}
	c.unparsedDone = true
	seen := map[*parse.FuncDecl]bool{}
	for _, d := range c.file.Diags {
		if d.Severity != diag.Error {
			continue
		}
		var in *parse.FuncDecl
		for _, fn := range c.funcs {
			if fn.Body != nil && d.Pos >= fn.Pos() && d.Pos < fn.End() {
				in = fn
			}
		}
		switch {
		case in != nil && seen[in]:
		case in != nil:
			seen[in] = true
			c.unparsedList = append(c.unparsedList, unparsed{fn: in, start: in.Body.Pos(), end: in.Body.End(), err: d})
		default:
			start := d.Pos
			for start > 0 && c.src[start-1] != '\n' {
				start--
			}
			c.unparsedList = append(c.unparsedList, unparsed{start: start, end: lineEnd(c.src, d.Pos), err: d})
		}
	}
	return c.unparsedList
}

// parseErrorText renders a parse error as `line:col: message` for a
// diagnostic that refuses because of it.
func (c *portCtx) parseErrorText(d diag.Diagnostic) string {
	line, col := c.file.Src.LineCol(d.Pos)
	return fmt.Sprintf("%d:%d: %s", line, col, d.Message)
}

// unparsedFn returns the parse error inside fn's body, if any.
func (c *portCtx) unparsedFn(fn *parse.FuncDecl) (diag.Diagnostic, bool) {
	for _, u := range c.unparsedRegions() {
		if u.fn == fn {
			return u.err, true
		}
	}
	return diag.Diagnostic{}, false
}

// unparsedLaunchDrops refuses a kernel whose launches bamgen may not see
// (S5, S6): code the parser did not understand mentions the kernel's name
// (`k << < g, b >> > (d, n);` is one statement it cannot read), or a
// launch of it is in a function with parse errors, which bamgen does not
// edit. Porting the parameter would leave such a launch passing a raw
// pointer.
func (c *portCtx) unparsedLaunchDrops(hp *hostPlan, key paramKey) bool {
	for _, u := range c.unparsedRegions() {
		if u.fn == key.fn || !mentions(string(c.src[u.start:u.end]), key.fn.Name) {
			continue
		}
		where := "code"
		if u.fn != nil {
			where = u.fn.Name
		}
		c.hostDrop(hp, []paramKey{key}, u, CodeUnparsedUse, fmt.Sprintf(
			"%s is named in %s, which bamgen's parser did not understand (%s), so bamgen cannot see or rewrite a launch there; %s is not ported until that parses",
			key.fn.Name, where, c.parseErrorText(u.err), key.fn.Name))
		return true
	}
	return false
}
