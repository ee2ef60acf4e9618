package port

import (
	"fmt"
	"regexp"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/parse"
)

// The parser follows one branch of each #if/#ifdef and keeps the others as
// inactive text. A kernel launched, or a buffer used, in such a branch is a
// use the port cannot see: rewriting the kernel's parameter or the buffer's
// allocation would leave that branch passing a plain pointer that no longer
// exists. dropHiddenUses refuses those arrays instead.
func (c *portCtx) dropHiddenUses(chosen map[paramKey]string) {
	regions := inactiveRegions(c.file)
	if len(regions) == 0 {
		return
	}
	for _, key := range sortedKeys(chosen) { // in kernel order: diagnostics at one place keep one order
		names := append([]string{key.fn.Name}, c.launchArgNames(key)...)
		for _, name := range names {
			if r, ok := mentionedIn(regions, name); ok {
				delete(chosen, key)
				c.addDiag(diag.Diagnostic{Pos: r.Start, End: r.End, Severity: diag.Warning, Code: CodeHiddenUse,
					Message: fmt.Sprintf("%s is used in a preprocessor branch bamgen does not parse (it follows the first branch of each #if); "+
						"%s of %s is not ported; make that branch the first one, or port each configuration separately",
						name, key.fn.Params[key.idx].Name, key.fn.Name)})
				break
			}
		}
	}
}

// launchArgNames lists the plain variable names passed for the parameter
// at every launch of its kernel.
func (c *portCtx) launchArgNames(key paramKey) []string {
	var out []string
	for _, l := range c.launches() { // <<<>>> launches, by the kernel's name
		if l.expr == nil || parse.ShortFuncName(l.expr.Kernel) != key.fn.Name || key.idx >= len(l.expr.Args) {
			continue
		}
		if id, ok := l.expr.Args[key.idx].(*parse.Ident); ok {
			out = append(out, id.Name)
		}
	}
	for _, l := range c.launches() { // runtime API launches: the argument or the &VAR entry
		if l.api != nil && l.kernel == key.fn {
			if id := argIdent(l, key.idx); id != nil {
				out = append(out, id.Name)
			}
		}
	}
	return out
}

type region struct {
	Start, End int
	text       []byte
}

func inactiveRegions(f *parse.File) []region {
	var out []region
	for _, t := range f.Tokens {
		if t.Kind == parse.Inactive {
			out = append(out, region{t.Start, t.End, f.Src.Bytes[t.Start:t.End]})
		}
	}
	return out
}

func mentionedIn(regions []region, name string) (region, bool) {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
	for _, r := range regions {
		if re.Match(r.text) {
			return r, true
		}
	}
	return region{}, false
}
