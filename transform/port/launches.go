package port

import (
	"strings"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/templates"
)

// launchIndex holds the file's launches, found once by the analysis
// (analysis.File.Launches), with the kernel each names and, for the void**
// runtime API forms, the argument array bamgen can rewrite. Selection,
// the host plan and inactive.go read it; it knows nothing of the plan.
type launchIndex struct {
	*source
	an       *analysis.File
	funcs    []*parse.FuncDecl
	sites    []*launchSite     // built on first use
	apiCalls []*parse.CallExpr // built on first use
}

// launches lists every launch in the file, once: the analysis found them
// (analysis.File.Launches, the one launch finder); this adds the kernel
// each names, when exactly one definition has that name.
func (c *launchIndex) launches() []*launchSite {
	if c.sites != nil {
		return c.sites
	}
	c.sites = []*launchSite{}
	kernels := map[string][]*parse.FuncDecl{}
	for _, k := range kernelsIn(c.funcs) {
		kernels[k.Name] = append(kernels[k.Name], k)
	}
	for _, l := range c.an.Launches {
		var site *launchSite
		if l.Expr != nil {
			site = &launchSite{expr: l.Expr, args: l.Expr.Args}
			if ks := kernels[l.Kernel]; len(ks) == 1 { // the analysis's name: a clone pick launches the kernel
				site.kernel = ks[0]
			}
		} else {
			site = apiLaunchSite(l, kernels)
		}
		site.fn, site.parents = l.Func, l.Stack
		c.sites = append(c.sites, site)
	}
	c.resolveArgsArrays(c.sites)
	return c.sites
}

// launchesOf returns the launches of kernel k.
func (c *launchIndex) launchesOf(k *parse.FuncDecl) []*launchSite {
	var out []*launchSite
	for _, l := range c.launches() {
		if l.kernel == k {
			out = append(out, l)
		}
	}
	return out
}

// launchAPICalls lists the cudaLaunch* calls of the file, once.
func (c *launchIndex) launchAPICalls() []*parse.CallExpr {
	if c.apiCalls != nil {
		return c.apiCalls
	}
	c.apiCalls = []*parse.CallExpr{}
	for _, fn := range c.funcs {
		if fn.Body == nil {
			continue
		}
		parse.WithStack(fn.Body, func(n parse.Node, _ []parse.Node) bool {
			if call, ok := n.(*parse.CallExpr); ok && strings.HasPrefix(parse.ShortFuncName(call.Fun), "cudaLaunch") {
				c.apiCalls = append(c.apiCalls, call)
			}
			return true
		})
	}
	return c.apiCalls
}

// siteOf returns the launch whose expression is n (a <<<>>> launch or a
// runtime API call), or nil.
func (c *launchIndex) siteOf(n parse.Node) *launchSite {
	for _, s := range c.launches() {
		if s.node() == n {
			return s
		}
	}
	return nil
}

// emitLaunchChecks puts `bam_rt.check_launch("k", block);` on the line of
// every <<<>>> launch of a ported kernel, right after its `;`: a launch that
// fails (a ported kernel needs more registers) becomes a bam::error naming
// the kernel, the block size and the reason, even where the original never
// checked. The block expression is repeated only when evaluating it again
// cannot change anything.
func (c *portCtx) emitLaunchChecks(hp *hostPlan, wraps map[*launchSite][]templates.Array) {
	for _, l := range c.launches() {
		if l.api != nil || l.expr == nil || l.kernel == nil || len(c.ported[l.kernel]) == 0 || l.fn == nil || l.fn.IsDevice() {
			continue
		}
		s, ok := launchStmt(l)
		if !ok || c.followedBy(s, "check_launch") { // checked by a port before
			continue
		}
		d := templates.Check{RT: rtName, Kernel: l.kernel.Name}
		for _, p := range l.parents {
			if _, ok := p.(*parse.LambdaExpr); ok { // bam_rt may not be captured
				d.RT = "bam::default_runtime()"
			}
		}
		if len(l.expr.Config) >= 2 {
			if b := oneLine(c.text(l.expr.Config[1])); pureText(b) {
				d.Block = b
			}
		}
		check := templates.Render("check_launch", d)
		switch n := len(l.parents); {
		case len(wraps[l]) > 0: // inside the wrap block, on the launch's line
			hp.edits = append(hp.edits, edit.Edit{Start: s.End(), End: s.End(), New: " " + check, Rewrite: Launches.String()})
		case n < 2 || !isBlock(l.parents[n-2]):
			// the body of an if/for/while without braces: keep the check in it
			var parent parse.Node
			if n >= 2 {
				parent = l.parents[n-2]
			}
			hp.edits = append(hp.edits, c.insertAfter(s, parent, check, true, Launches.String())...)
		default:
			hp.edits = append(hp.edits, c.insertAfter(s, nil, check, false, Launches.String())...)
		}
		hp.fns[l.fn] = true
	}
}

// pureText reports whether an expression, as written, can be evaluated a
// second time without effect: no calls (except dim3(...)), assignments,
// increments or decrements.
func pureText(s string) bool {
	if strings.Contains(s, "++") || strings.Contains(s, "--") {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '=':
			prev := byte(' ')
			if i > 0 {
				prev = s[i-1]
			}
			next := byte(' ')
			if i+1 < len(s) {
				next = s[i+1]
			}
			if next != '=' && prev != '=' && prev != '<' && prev != '>' && prev != '!' {
				return false
			}
		case '(':
			j := i
			for j > 0 && s[j-1] == ' ' {
				j--
			}
			k := j
			for k > 0 && isIdentByte(s[k-1]) {
				k--
			}
			if k < j && s[k:j] != "dim3" {
				return false
			}
		case '[', '{':
			return false
		}
	}
	return true
}

func isBlock(n parse.Node) bool {
	_, ok := n.(*parse.BlockStmt)
	return ok
}
