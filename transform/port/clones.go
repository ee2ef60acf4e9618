package port

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/bamgen/bamgen/analysis"
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
// other files of a program see only that), or when no launch can choose it
// (an array argument that is not a plain name, a launch before the
// definition). The clone is the kernel as ported, without an access-pattern
// rewrite (same results, the original's work assignment): where a rewrite
// changes only the kernel's body (claware, transpose, coarsen) the launches
// pick it as above; where it changes a launch too (odt: grid, block, the
// plan argument) the launch statement is guarded instead (CloneLaunch.Guard):
//
//	if (bam::all_direct(a, b)) { k_bam_direct<<<grid, block>>>(a, b, n); } else {
//	k<<<odt grid, odt block>>>(a, b, n, plan); }
//
// The pipeline (package transform) chooses per launch: Result.Clones, and
// Result.NoClones for the notes (PORT095) on odt kernels without a clone.

// Clone is a kernel's direct clone and its <<<>>> launches: the pipeline
// applies Picks, or Guards where an access-pattern rewrite changes the
// launches.
type Clone struct {
	Kernel   string
	Def      edit.Edit // the clone's definition, right after the kernel
	Launches []CloneLaunch
}

// CloneLaunch is one <<<>>> launch of a cloned kernel, after its
// definition, and the two ways it can choose the clone.
type CloneLaunch struct {
	Expr *parse.LaunchExpr
	// Pick replaces the launched kernel by the choice between the clone
	// and the kernel, `(bam::all_direct(a) ? k_bam_direct : k)<<<...>>>`;
	// nil when the launch cannot (NoPick says why).
	Pick   *edit.Edit
	NoPick string
	// Guard makes the launch statement the choice between two launches:
	// the clone's, as the launch was written (the port's edits only),
	// and the launch itself, as an access-pattern rewrite changes it
	// (odt: another grid and block, the plan argument):
	//
	//	if (bam::all_direct(a)) { k_bam_direct<<<grid, block>>>(a, n); } else {
	//	k<<<odt grid, odt block>>>(a, n, plan); }
	//
	// Still one statement; the clone's copy of the launch shows the
	// launch's lines, and the launch starts a line of its own that shows
	// its first line again (edit.Edit.Repeats). nil when the launch
	// cannot be guarded (NoGuard says why).
	Guard   []edit.Edit
	NoGuard string
}

// Picks returns the clone and the launches that pick it, or nil when no
// launch can (the clone would never run).
func (cl *Clone) Picks() []edit.Edit {
	var out []edit.Edit
	for _, l := range cl.Launches {
		if l.Pick != nil {
			out = append(out, *l.Pick)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return append([]edit.Edit{cl.Def}, out...)
}

// NoClone is a ported kernel that gets no direct clone, and why: the
// pipeline reports it when a rewrite changes the kernel's launches, which
// then run the rewritten kernel also on data in GPU memory.
type NoClone struct {
	Kernel string
	Pos    int
	End    int
	Why    string
}

const cloneSuffix = "_bam_direct"

// plainArg: a name or a member of one, which a launch may evaluate twice.
var plainArg = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*((\.|->)[A-Za-z_][A-Za-z0-9_]*)*$`)

// constView: the conversion the port writes where a template kernel
// deduces T from a bam::array<const T> parameter, `bam::array<const
// float>(d_a_bam)`; bam::all_direct tests the array it converts.
var constView = regexp.MustCompile(`^bam::array<[^()]*>\(\s*([A-Za-z_][A-Za-z0-9_]*((\.|->)[A-Za-z_][A-Za-z0-9_]*)*)\s*\)$`)

// directClone returns the clone of ps.fn (opened and closed like the
// kernel's versions, at openAfter) and its launches, or nil and why not.
func (c *portCtx) directClone(ps paramSet, openAfter int, args []versionArg) (*Clone, string) {
	fn := ps.fn
	clone := fn.Name + cloneSuffix
	if c.nameUses(clone) > 0 {
		return nil, "the name " + clone + " is taken"
	}
	launches, why := c.cloneLaunches(ps)
	if launches == nil {
		return nil, why
	}
	text, ok := c.cloneText(ps, openAfter, args, clone)
	if !ok {
		return nil, "bamgen could not copy its ported text"
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
	def := edit.Edit{Start: at, End: at, New: lead + text + note + "\n", Rewrite: Versions.String(), Reline: lead == "",
		Repeats: lead == "", RepeatsAt: start}
	return &Clone{Kernel: fn.Name, Def: def, Launches: launches}, ""
}

// cloneLaunches returns each <<<>>> launch of ps.fn after its definition,
// with the edits that make it choose the clone, or nil and why when the
// kernel's name is used in any other way or no launch can choose.
func (c *portCtx) cloneLaunches(ps paramSet) ([]CloneLaunch, string) {
	fn := ps.fn
	if len(c.prototypesOf(fn)) > 0 {
		// Launches may be in files that see only the prototype (a whole
		// program is ported as one text): they would not see the clone.
		return nil, "it has a prototype, and launches that see only the prototype would not see the clone"
	}
	uses := 1
	var out []CloneLaunch
	var why string
	for _, l := range c.an.Launches {
		if l.Kernel != fn.Name {
			continue
		}
		if l.Expr == nil {
			// cudaLaunchKernel and friends pass the kernel as a pointer: keep one kernel
			return nil, "it is launched through " + l.Via + ", which takes the kernel itself"
		}
		uses++
		cl := CloneLaunch{Expr: l.Expr}
		cond, why0 := c.cloneCondition(ps, l.Expr)
		if why0 == "" {
			cl.Pick, cl.NoPick = c.pickingLaunch(ps, l.Expr, cond)
			cl.Guard, cl.NoGuard = c.guardedLaunch(l, cond)
		} else {
			cl.NoPick, cl.NoGuard = why0, why0
		}
		if cl.Pick == nil && cl.Guard == nil {
			why = cl.NoGuard
			continue
		}
		out = append(out, cl)
	}
	if uses != c.nameUses(fn.Name) {
		return nil, "its name is used other than in its definition and <<<>>> launches (a cudaFuncSetAttribute or a pointer to it would not reach the clone)"
	}
	if len(out) == 0 {
		if why == "" {
			why = "no launch of it is in this file"
		}
		return nil, "no launch can choose the clone: " + why
	}
	return out, ""
}

// cloneCondition returns the array arguments of a launch that
// bam::all_direct tests, "a, b", or why the launch cannot choose the clone.
func (c *portCtx) cloneCondition(ps paramSet, l *parse.LaunchExpr) (string, string) {
	fn := ps.fn
	switch {
	case l.Pos() < fn.End():
		return "", "the launch comes before the kernel's definition, where the clone is not declared yet"
	case len(l.Args) != len(fn.Params):
		return "", fmt.Sprintf("the launch passes %d arguments for %d parameters", len(l.Args), len(fn.Params))
	}
	_, explicit := l.Kernel.(*parse.TemplateIdent)
	if _, plain := l.Kernel.(*parse.Ident); !plain && !explicit {
		return "", "the launch names the kernel through an expression"
	}
	if edit.Touches(edit.Spans(c.host.edits), l.Kernel.Pos(), l.Kernel.End()) {
		return "", "the port rewrites the launch's kernel name"
	}
	args := make([]string, 0, len(ps.set))
	for _, idx := range ps.set {
		a := l.Args[idx]
		text := strings.TrimSpace(edit.Within(c.src, c.host.edits, a.Pos(), a.End()))
		if m := constView.FindStringSubmatch(text); m != nil {
			text = m[1]
		}
		if !plainArg.MatchString(text) {
			return "", "the array argument `" + oneLine(text) + "` is not a plain name (bam::all_direct would evaluate it a second time)"
		}
		args = append(args, text)
	}
	return strings.Join(args, ", "), ""
}

// cloneKernel is the launch's kernel, as written, naming the clone.
func (c *portCtx) cloneKernel(l *parse.LaunchExpr) string {
	kernel := c.text(l.Kernel)
	name := kernel
	if ti, ok := l.Kernel.(*parse.TemplateIdent); ok {
		name = ti.Name
	}
	return strings.Replace(kernel, name, name+cloneSuffix, 1)
}

// pickingLaunch rewrites the kernel of one launch into the choice between
// the clone and the kernel, given the all_direct arguments.
func (c *portCtx) pickingLaunch(ps paramSet, l *parse.LaunchExpr, cond string) (*edit.Edit, string) {
	if _, explicit := l.Kernel.(*parse.TemplateIdent); ps.fn.Template != nil && !explicit {
		return nil, "the template's arguments are deduced, and `c ? k_bam_direct : k` cannot deduce them"
	}
	kernel := c.text(l.Kernel)
	text := "(bam::all_direct(" + cond + ") ? " + c.cloneKernel(l) + " : " + kernel + ")"
	return &edit.Edit{Start: l.Kernel.Pos(), End: l.Kernel.End(), New: text, Rewrite: Versions.String()}, ""
}

// guardedLaunch returns the edits that make a launch statement choose
// between the clone's launch and its own (CloneLaunch.Guard), or why it
// cannot: the launch must be a statement of its own, in a place where an
// if statement may stand, and bamgen must be able to copy it as ported.
// The copy evaluates the launch's arguments as the launch did, once;
// bam::all_direct reads only plain names.
func (c *portCtx) guardedLaunch(l analysis.Launch, cond string) ([]edit.Edit, string) {
	le := l.Expr
	n := len(l.Stack)
	var s *parse.ExprStmt
	if n >= 2 {
		s, _ = l.Stack[n-1].(*parse.ExprStmt)
	}
	if s == nil || s.X != parse.Expr(le) || s.Pos() != le.Pos() || c.src[s.End()-1] != ';' {
		return nil, "the launch is part of a larger expression, not a statement of its own"
	}
	if !statementPlace(l.Stack[n-2], s) {
		return nil, "the launch statement stands where an if statement cannot (a for or if initializer)"
	}
	text := c.text(s)
	for _, line := range strings.Split(text, "\n")[1:] {
		if strings.HasPrefix(strings.TrimLeft(line, " \t"), "#") {
			return nil, "a preprocessor directive is inside the launch statement"
		}
	}
	for _, e := range c.host.edits {
		if e.Start < s.Pos() && e.End > s.Pos() || e.Start < s.End() && e.End > s.End() {
			return nil, "the port rewrites the launch together with code around it"
		}
	}
	if edit.Touches(edit.Spans(c.host.edits), s.End()-1, s.End()) {
		return nil, "the port rewrites the launch's `;`"
	}
	kernel := c.text(le.Kernel)
	ported := edit.Within(c.src, c.host.edits, s.Pos(), s.End())
	if !strings.HasPrefix(ported, kernel) || strings.Count(ported, "\n") != strings.Count(text, "\n") {
		return nil, "the port rewrites the launch onto other lines"
	}
	copied := c.cloneKernel(le) + ported[len(kernel):]
	open := edit.Edit{Start: le.Kernel.Pos(), End: le.Kernel.End(), Rewrite: Versions.String(), Repeats: true, RepeatsAt: s.Pos(),
		New: "if (bam::all_direct(" + cond + ")) { " + copied + " } else {\n" + c.indentAt(s.Pos()) + kernel}
	close := edit.Edit{Start: s.End() - 1, End: s.End(), New: "; }", Rewrite: Versions.String()}
	return []edit.Edit{open, close}, ""
}

// statementPlace reports whether s stands in parent where any statement
// may: in a block, as the branch of an if, the body of a loop or switch,
// or after a label (not as an initializer).
func statementPlace(parent parse.Node, s parse.Stmt) bool {
	switch p := parent.(type) {
	case *parse.BlockStmt:
		return true
	case *parse.IfStmt:
		return p.Then == s || p.Else == s
	case *parse.ForStmt:
		return p.Body == s
	case *parse.RangeForStmt:
		return p.Body == s
	case *parse.WhileStmt:
		return p.Body == s
	case *parse.DoStmt:
		return p.Body == s
	case *parse.SwitchStmt:
		return p.Body == s
	case *parse.LabeledStmt:
		return p.Stmt == s
	}
	return false
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
