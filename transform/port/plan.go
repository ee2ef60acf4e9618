package port

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/parse"
)

// plan decides which chosen parameters are ported. A parameter is ported
// only when its kernel body, every helper it is passed to, and every launch
// argument behind it on the host can all be rewritten; dropping one can
// invalidate another (two kernels sharing one host buffer, one helper
// shared by two kernels), so the decision is iterated to a fixpoint.
func (c *portCtx) plan(chosen map[paramKey]string) {
	dropped := map[paramKey]string{}
	for round := 0; ; round++ {
		c.ported = map[*parse.FuncDecl][]int{}
		for _, key := range sortedKeys(chosen) {
			if dropped[key] != "" {
				continue
			}
			if why := c.opts.Exclude[key.fn.Name]; why != "" {
				dropped[key] = why
				continue
			}
			if why := c.kernelSideRefusal(key); why != "" {
				dropped[key] = why
				continue
			}
			c.ported[key.fn] = append(c.ported[key.fn], key.idx)
		}
		c.planHelpers()
		conflicts := c.helperConflicts()
		c.host = c.planHost()
		newlyDropped := false
		for _, drop := range append(conflicts, c.host.drops...) {
			if dropped[drop.key] == "" {
				dropped[drop.key] = drop.why
				newlyDropped = true
			}
		}
		if !newlyDropped || round > len(chosen) {
			break
		}
	}
	c.recordChoices(chosen, dropped)
}

// drop says that a chosen parameter cannot be ported, and why.
type drop struct {
	key paramKey
	why string
}

// kernelSideRefusal checks the parameter's uses in its kernel and in every
// helper it reaches; it reports the refusals as diagnostics (once) and
// returns a one-line reason, or "".
func (c *portCtx) kernelSideRefusal(key paramKey) string {
	var refused []diag.Diagnostic
	c.collectRefusals(key, map[paramKey]bool{}, &refused)
	if len(refused) == 0 {
		return ""
	}
	for _, d := range refused {
		c.addDiagOnce(d)
	}
	return refused[0].Message
}

// collectRefusals gathers the refusals of key and of the helper parameters
// it is passed to (recursion through helpers is cut by seen).
func (c *portCtx) collectRefusals(key paramKey, seen map[paramKey]bool, out *[]diag.Diagnostic) {
	if seen[key] {
		return
	}
	seen[key] = true
	p := c.analyzeParam(key.fn, key.idx)
	*out = append(*out, p.refused...)
	for _, hc := range p.calls {
		before := len(*out)
		c.collectRefusals(paramKey{hc.callee, hc.arg}, seen, out)
		if len(*out) > before {
			*out = append(*out, diag.Diagnostic{Pos: hc.call.Pos(), End: hc.call.End(), Severity: diag.Warning, Code: CodeUnknownCall,
				Message: fmt.Sprintf("%s: %s is passed to %s, whose parameter %s cannot become a bam::array; %s is left a plain pointer",
					key.fn.Name, key.fn.Params[key.idx].Name, hc.callee.Name, hc.callee.Params[hc.arg].Name, key.fn.Params[key.idx].Name)})
		}
	}
}

func (c *portCtx) addDiagOnce(d diag.Diagnostic) {
	for _, e := range c.diags {
		if e.Pos == d.Pos && e.Code == d.Code && e.Message == d.Message {
			return
		}
	}
	c.addDiag(d)
}

// recordChoices fills the report and the notes about what was ported.
func (c *portCtx) recordChoices(chosen map[paramKey]string, dropped map[paramKey]string) {
	for _, key := range sortedKeys(chosen) {
		ch := Choice{Kernel: key.fn.Name, Param: key.fn.Params[key.idx].Name, Reason: chosen[key], key: key}
		ch.Why = dropped[key]
		ch.Ported = ch.Why == ""
		c.choices = append(c.choices, ch)
		if ch.Ported {
			p := key.fn.Params[key.idx]
			c.addDiag(diag.Diagnostic{Pos: p.Pos(), End: p.End(), Severity: diag.Note, Code: CodeArrayPorted,
				Message: fmt.Sprintf("%s: %s becomes %s (%s)", ch.Kernel, ch.Param, bamType(c, p.Type), ch.Reason)})
		}
	}
}

// bamType renders the bam::array type for a pointer parameter type.
func bamType(c *portCtx, t *parse.TypeRef) string {
	base := strings.TrimSpace(string(c.src[t.BaseSpan.Start:t.BaseSpan.Stop]))
	if base == "" {
		base = t.Base
	}
	if t.Const {
		base = "const " + base
	}
	return "bam::array<" + base + ">"
}

// portedSet returns the ported parameter indexes of fn in its ported
// variant: a kernel's ported parameters, or a helper's chosen set.
func (c *portCtx) portedSet(fn *parse.FuncDecl) []int {
	if ps, ok := c.ported[fn]; ok {
		return ps
	}
	if h := c.helpers[fn]; h != nil && len(h.sets) == 1 {
		return h.sets[0]
	}
	return nil
}

func setKey(s []int) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ",")
}

func sortedInts(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for v := range m {
		out = append(out, v)
	}
	sort.Ints(out)
	return out
}
