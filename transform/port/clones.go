package port

import (
	"regexp"
	"strings"

	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
)

// Direct clones. The versions (versions.go) give a ported kernel a
// plain-pointer body, but one kernel has one register count: the cached
// body's (its out-of-line miss path is an indirect call, which sets a floor
// of 64 on sm_80/sm_90), where the original needed 16-32. A bandwidth-bound
// kernel then runs at half the occupancy and up to 1.8x the original's time
// with every access a plain load (ncu on an H200: vector_add 442 us at 64
// registers, the original 247 us at 16; docs/benchmarks.md).
//
// So a kernel whose launches bamgen can all see also gets a clone,
// NAME_bam_direct, right after it: the same ported text compiled over
// bam::direct_array views only (bam::as_direct), so it needs the registers
// the original needed. Each <<<>>> launch of the kernel after it picks:
//
//	(bam::all_direct(a, b) ? k_bam_direct : k)<<<grid, block>>>(a, b, n);
//
// The kernel itself keeps both versions, so a launch bamgen does not rewrite
// still runs correctly. A kernel gets no clone when its name appears
// anywhere but its definition and <<<>>> launches (a cudaFuncSetAttribute
// on it would not reach the clone), when it has a prototype (launches in
// other files of a program see only that), or when no launch can pick (a
// template launched without explicit arguments, an array argument that is
// not a plain name). The clone
// is the kernel as ported, without an access-pattern rewrite (same results,
// the original's work assignment): the pipeline keeps it when a rewrite
// changes only the kernel's body (claware, transpose, coarsen) and drops it
// when the rewrite changes a launch too (odt): Result.Clones.

// Clone is a kernel's direct clone and the launches that pick it: edits the
// pipeline applies unless an access-pattern rewrite changes the kernel.
type Clone struct {
	Kernel string
	Edits  []edit.Edit
}

const cloneSuffix = "_bam_direct"

// plainArg: a name or a member of one, which a launch may evaluate twice.
var plainArg = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*((\.|->)[A-Za-z_][A-Za-z0-9_]*)*$`)

// directClone returns the clone of ps.fn (opened and closed like the
// kernel's versions, at openAfter) and its launch edits, or nil.
func (c *portCtx) directClone(ps paramSet, openAfter int, args []versionArg) *Clone {
	fn := ps.fn
	clone := fn.Name + cloneSuffix
	if c.nameUses(clone) > 0 {
		return nil
	}
	launches := c.pickingLaunches(ps)
	if launches == nil {
		return nil
	}
	text, ok := c.cloneText(ps, openAfter, args, clone)
	if !ok {
		return nil
	}
	at := lineEnd(c.src, fn.End())
	lead := ""
	if at > 0 && c.src[at-1] != '\n' {
		lead = "\n"
	}
	note := " // bamgen: " + clone + " is " + fn.Name + " over plain pointers only; launches pick it when every array is in GPU memory or zero-copy host memory"
	start := funcStart(fn)
	// The clone has the kernel's lines, one for one: each shows the line it
	// copies, so a compiler error in it names the kernel's line.
	edits := []edit.Edit{{Start: at, End: at, New: lead + text + note + "\n", Rewrite: Versions.String(), Reline: lead == "",
		Repeats: lead == "", RepeatsAt: start}}
	return &Clone{Kernel: fn.Name, Edits: append(edits, launches...)}
}

// pickingLaunches returns the edits that make each <<<>>> launch of ps.fn
// pick the clone, or nil when the kernel's name is used in any other way or
// no launch can pick.
func (c *portCtx) pickingLaunches(ps paramSet) []edit.Edit {
	fn := ps.fn
	if len(c.prototypesOf(fn)) > 0 {
		// Launches may be in files that see only the prototype (a whole
		// program is ported as one text): they would not see the clone.
		return nil
	}
	uses := 1
	var edits []edit.Edit
	for _, l := range c.an.Launches {
		if l.Kernel != fn.Name {
			continue
		}
		if l.Expr == nil {
			return nil // cudaLaunchKernel and friends pass the kernel as a pointer: keep one kernel
		}
		uses++
		if e, ok := c.pickingLaunch(ps, l.Expr); ok {
			edits = append(edits, e)
		}
	}
	if uses != c.nameUses(fn.Name) || len(edits) == 0 {
		return nil
	}
	return edits
}

// pickingLaunch rewrites the kernel of one launch into the choice between
// the clone and the kernel.
func (c *portCtx) pickingLaunch(ps paramSet, l *parse.LaunchExpr) (edit.Edit, bool) {
	fn := ps.fn
	if l.Pos() < fn.End() || len(l.Args) != len(fn.Params) {
		return edit.Edit{}, false // before the clone is declared, or a default argument
	}
	kernel := c.text(l.Kernel)
	ti, explicit := l.Kernel.(*parse.TemplateIdent)
	if fn.Template != nil && !explicit {
		return edit.Edit{}, false // `k<<<...>>>(...)` deduces: `c ? k_bam_direct : k` cannot
	}
	if _, plain := l.Kernel.(*parse.Ident); !plain && !explicit {
		return edit.Edit{}, false
	}
	if edit.Touches(edit.Spans(c.host.edits), l.Kernel.Pos(), l.Kernel.End()) {
		return edit.Edit{}, false
	}
	args := make([]string, 0, len(ps.set))
	for _, idx := range ps.set {
		a := l.Args[idx]
		text := strings.TrimSpace(edit.Within(c.src, c.host.edits, a.Pos(), a.End()))
		if !plainArg.MatchString(text) {
			return edit.Edit{}, false
		}
		args = append(args, text)
	}
	name := kernel
	if explicit {
		name = ti.Name
	}
	cloned := strings.Replace(kernel, name, name+cloneSuffix, 1)
	text := "(bam::all_direct(" + strings.Join(args, ", ") + ") ? " + cloned + " : " + kernel + ")"
	return edit.Edit{Start: l.Kernel.Pos(), End: l.Kernel.End(), New: text, Rewrite: Versions.String()}, true
}

// cloneText is the kernel's ported text renamed to clone, its body opened
// with bam::as_direct instead of bam::by_placement: on the lines of the `{`
// (or last leading __shared__ declaration) and the `}`, so the clone keeps
// the kernel's line count.
func (c *portCtx) cloneText(ps paramSet, openAfter int, args []versionArg, clone string) (string, bool) {
	open, close := versionTexts("bam::as_direct", args)
	rb := ps.fn.Body.End() - 1
	text, err := c.portedCopy(ps, clone, Versions,
		edit.Edit{Start: openAfter, End: openAfter, New: " " + open, Rewrite: Versions.String()},
		edit.Edit{Start: rb, End: rb, New: close + " ", Rewrite: Versions.String()})
	return text, err == nil
}

// isDirectClone reports whether fn is a direct clone a port made before
// (NAME_bam_direct next to a definition of NAME): it is never ported on its
// own, and its launches are its kernel's (analysis.launchedKernel).
func (c *portCtx) isDirectClone(fn *parse.FuncDecl) bool {
	name, ok := strings.CutSuffix(fn.Name, cloneSuffix)
	return ok && fn.IsKernel() && len(c.byName[name]) > 0
}

// nameUses counts the identifier tokens spelled name in the file, qualified
// (`ns::k`) or not, but not as a member (`x.k`, `p->k`).
func (c *portCtx) nameUses(name string) int {
	n := 0
	for i, t := range c.file.Tokens {
		if t.Kind != parse.Identifier || string(c.src[t.Start:t.End]) != name {
			continue
		}
		if p := c.prevSignificant(i); p < 0 || (c.tokText(p) != "." && c.tokText(p) != "->") {
			n++
		}
	}
	return n
}
