package port

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/templates"
)

// Forwarding host functions. Real programs often allocate in one host
// function and launch in another:
//
//	void gs_gpu(int *d_Ap, int *d_Aj, ...) { gs_kernel<<<g, b>>>(m, d_Ap, d_Aj, ...); }
//	... main: cudaMalloc(&d_Ap, ...); gs_gpu(d_Ap, d_Aj, ...);
//
// A pointer parameter of such a function that is only passed on, whole, to
// launches (or to another such function) can become a bam::array as well:
// the bam::array is a handle (a few words, copied by value like the
// pointer), so `int *d_Ap` becomes `bam::array<int> d_Ap`, its launches stay
// as written, and each call passes the caller's bam::array. The buffer is
// then planned in the caller, where it is allocated, like a buffer launched
// there. Every call of the function must be visible in this file and pass a
// buffer bamgen can trace; any other use of the parameter (arithmetic, a
// copy, a null test, a library call) or of the function (its address taken,
// an overload, a declaration in a local header other files include) leaves
// it a pointer, with the reason.

// forwarder is a pointer parameter of a host function that only forwards
// the buffer to launches.
type forwarder struct {
	key      paramKey
	launches []fwdLaunch // launches in the function that receive the parameter
	next     []paramKey  // forwarder parameters of other functions it is passed to
	copies   []hostOp    // whole-buffer copies and fills of the parameter in the function (statements of their own)
	calls    []fwdCall   // the calls of the function in this file
	why      string      // why the parameter cannot forward a bam::array ("" when it can)
}

// fwdLaunch is a launch argument that is the forwarded parameter.
type fwdLaunch struct {
	site *launchSite
	arg  int
}

// fwdCall is one call of a forwarding function: the argument for the
// forwarded parameter, in the calling function.
type fwdCall struct {
	call   *parse.CallExpr
	caller *parse.FuncDecl
	arg    parse.Expr
}

// forwarderOf returns what bamgen knows about parameter idx of the host
// function fn as a forwarder (memoised; it does not depend on the plan).
func (c *portCtx) forwarderOf(fn *parse.FuncDecl, idx int) *forwarder {
	key := paramKey{fn, idx}
	if f := c.fwds[key]; f != nil {
		return f
	}
	f := &forwarder{key: key, why: "its uses are being examined (a call cycle)"}
	c.fwds[key] = f
	f.why = c.examineForwarder(f)
	return f
}

// examineForwarder fills f and returns why it cannot forward, or "".
func (c *portCtx) examineForwarder(f *forwarder) string {
	fn, idx := f.key.fn, f.key.idx
	p := fn.Params[idx]
	switch {
	case fn.Body == nil || fn.IsDevice():
		return fmt.Sprintf("%s is not a host function defined in this file", fn.Name)
	case fn.Name == "main" || fn.Qualifier != "" || len(c.byName[fn.Name]) != 1:
		return fmt.Sprintf("%s is main, a member function or overloaded", fn.Name)
	case unsupportedType(p.Type) != "" || p.Name == "" || isBamArray(p.Type):
		return fmt.Sprintf("its parameter %s (%s) is not a plain T *", p.Name, typeText(p.Type))
	}
	if _, bad := c.unparsedFn(fn); bad {
		return fmt.Sprintf("%s has code bamgen's parser did not understand", fn.Name)
	}
	switch strings.ToLower(filepath.Ext(c.file.Src.Name)) {
	case ".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc":
		return fmt.Sprintf("%s is defined in a header, which other files include and call it from", fn.Name)
	}
	if h := c.headerDeclaring(fn.Name); h != "" {
		return fmt.Sprintf("%s is declared in the local header %s, which other files may include; bamgen does not change a function other files call", fn.Name, h)
	}
	sym := fn.Scope.Lookup(p.Name, p.NameSpan.Stop)
	if sym == nil || !sym.Param {
		return fmt.Sprintf("bamgen cannot resolve the parameter %s", p.Name)
	}
	// Every use of the parameter: a whole launch argument, or a whole
	// argument of a call to another forwarder.
	seen := map[int]bool{}
	why := ""
	parse.WithStack(fn.Body, func(n parse.Node, parents []parse.Node) bool {
		id, ok := n.(*parse.Ident)
		if !ok || why != "" || id.Name != p.Name || fn.Scope.Lookup(id.Name, id.Pos()) != sym {
			return why == ""
		}
		seen[id.Pos()] = true
		why = c.forwardUse(f, id, parents)
		return why == ""
	})
	if why != "" {
		return why
	}
	if n := c.countIdentTokens(fn.Body.Pos(), fn.Body.End(), p.Name); n != len(seen) {
		return fmt.Sprintf("%s is used in %s where bamgen's parser did not look (a macro, an unparsed statement)", p.Name, fn.Name)
	}
	if len(f.launches) == 0 && len(f.next) == 0 && len(f.copies) == 0 {
		return fmt.Sprintf("%s does not pass %s to a launch", fn.Name, p.Name)
	}
	return c.forwarderCalls(f)
}

// forwardUse classifies one use of a forwarder's parameter.
func (c *portCtx) forwardUse(f *forwarder, id *parse.Ident, parents []parse.Node) string {
	fn := f.key.fn
	parent, _, arg := enclosing(parents, id)
	// A copy to or from the whole buffer, or a fill, as a statement of its
	// own: it becomes a runtime call on the bam::array (read_bytes,
	// write_bytes, fill_bytes: byte counts as written).
	if _, launch := parent.(*parse.LaunchExpr); !launch {
		if op := c.classifyHostUse(fn, id, parents); op.stmt != nil && op.offset == nil && op.call != nil {
			switch op.kind {
			case opDownload, opUpload, opMemset0, opMemset:
				f.copies = append(f.copies, op)
				return ""
			case opNone, opMalloc, opManaged, opPinned, opFree, opLaunch, opNull, opForeign, opCopy, opSwap, opD2D, opForward, opDevPtr, opOther:
			}
		}
	}
	switch x := parent.(type) {
	case *parse.LaunchExpr:
		if j := indexOf(x.Args, arg); j >= 0 {
			if site := c.siteOf(x); site != nil && site.kernel != nil && j < len(site.kernel.Params) {
				f.launches = append(f.launches, fwdLaunch{site, j})
				return ""
			}
			return fmt.Sprintf("%s passes %s to a launch of %s, a kernel bamgen cannot find in this file", fn.Name, id.Name, parse.ShortFuncName(x.Kernel))
		}
	case *parse.CallExpr:
		j := indexOf(x.Args, arg)
		if j < 0 {
			break
		}
		if site := c.siteOf(x); site != nil {
			if site.api != nil && site.api.array == nil && site.kernel != nil && indexOf(site.args, arg) >= 0 {
				f.launches = append(f.launches, fwdLaunch{site, indexOf(site.args, arg)})
				return ""
			}
			return fmt.Sprintf("%s passes %s to %s through an argument array", fn.Name, id.Name, site.kernelName())
		}
		callee := c.hostCallee(x)
		if callee == nil {
			return fmt.Sprintf("%s is used in `%s`", id.Name, oneLine(c.text(x)))
		}
		if g := c.forwarderOf(callee, j); g.why != "" {
			return fmt.Sprintf("%s passes %s to %s, which cannot take a bam::array there: %s", fn.Name, id.Name, callee.Name, g.why)
		}
		if deducesConst(callee, j, x) && !fn.Params[f.key.idx].Type.Const {
			return fmt.Sprintf("%s passes %s to the template %s, whose const parameter would not deduce its type from a bam::array of non-const elements", fn.Name, id.Name, callee.Name)
		}
		f.next = append(f.next, paramKey{callee, j})
		return ""
	}
	at := parse.Node(id)
	if s := innermostStmt(parents); s != nil {
		at = s
	}
	return fmt.Sprintf("%s is used in `%s`", id.Name, oneLine(c.text(at)))
}

// hostCallee resolves a call to the one host function definition of this
// file it names, or nil.
func (c *portCtx) hostCallee(call *parse.CallExpr) *parse.FuncDecl {
	switch parse.Unparen(call.Fun).(type) {
	case *parse.Ident, *parse.TemplateIdent:
	default:
		return nil // a member call, a call through a pointer
	}
	if parse.FuncName(call.Fun) != parse.ShortFuncName(call.Fun) {
		return nil // ns::f: not resolved to this file's f
	}
	defs := c.byName[parse.ShortFuncName(call.Fun)]
	if len(defs) != 1 || defs[0].IsDevice() || defs[0].Qualifier != "" || len(call.Args) != len(defs[0].Params) {
		return nil
	}
	return defs[0]
}

// forwarderCalls finds every call of f's function in this file; the
// function's name may appear nowhere else (its address taken, a friend
// declaration) except its own declarations.
func (c *portCtx) forwarderCalls(f *forwarder) string {
	fn := f.key.fn
	callees := map[int]bool{}
	for _, g := range c.funcs {
		if g.Body == nil {
			continue
		}
		parse.WithStack(g.Body, func(n parse.Node, _ []parse.Node) bool {
			call, ok := n.(*parse.CallExpr)
			if !ok || c.hostCallee(call) != fn {
				return true
			}
			callees[calleeNamePos(call)] = true
			f.calls = append(f.calls, fwdCall{call: call, caller: g, arg: call.Args[f.key.idx]})
			return true
		})
	}
	decls := map[int]bool{fn.NameSpan.Start: true}
	for _, d := range c.prototypesOf(fn) {
		decls[d.NameSpan.Start] = true
	}
	for i, t := range c.file.Tokens {
		if t.Kind != parse.Identifier || string(c.src[t.Start:t.End]) != fn.Name || callees[t.Start] || decls[t.Start] ||
			c.otherEntityAt(fn.Name, i) {
			continue
		}
		return fmt.Sprintf("%s is used other than by a direct call (at `%s`)", fn.Name, c.lineText(t.Start))
	}
	for _, m := range c.file.Macros {
		if mentions(codeOnly(m.Body), fn.Name) { // a call bamgen cannot see in the expansion
			return fmt.Sprintf("macro %s refers to %s; calls through it are hidden from bamgen", m.Name, fn.Name)
		}
	}
	if len(f.calls) == 0 {
		return fmt.Sprintf("%s is not called in this file; its callers are elsewhere", fn.Name)
	}
	for _, d := range c.prototypesOf(fn) {
		if len(d.Params) != len(fn.Params) || d.Params[f.key.idx].Type == nil {
			return fmt.Sprintf("a declaration of %s does not match its definition", fn.Name)
		}
	}
	return ""
}

// otherEntityAt reports whether token i, which spells name, names
// something other than the file-level function: a member (`s.name`,
// `p->name`) or a local variable or parameter of the function around it
// (`int flux = 0;` in a kernel beside a host function flux).
func (c *portCtx) otherEntityAt(name string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		t := c.file.Tokens[j]
		if t.Kind.IsTrivia() {
			continue
		}
		if p := string(c.src[t.Start:t.End]); p == "." || p == "->" {
			return true
		}
		break
	}
	pos := c.file.Tokens[i].Start
	for _, g := range c.funcs {
		if g.Body != nil && g.Span.Start <= pos && pos < g.Span.Stop {
			return g.Scope.Lookup(name, pos) != nil
		}
	}
	return false
}

// deducesConst: a call of the template function g without explicit
// template arguments, whose parameter j is const T *: bam::array<const T>
// does not deduce T from bam::array<float> (a conversion is not considered
// in deduction), so the argument must be converted explicitly.
func deducesConst(g *parse.FuncDecl, j int, call *parse.CallExpr) bool {
	if g.Template == nil || j >= len(g.Params) || g.Params[j].Type == nil || !g.Params[j].Type.Const {
		return false
	}
	_, explicit := parse.Unparen(call.Fun).(*parse.TemplateIdent)
	return !explicit
}

// calleeNamePos is where the called function's name starts.
func calleeNamePos(call *parse.CallExpr) int {
	if ti, ok := parse.Unparen(call.Fun).(*parse.TemplateIdent); ok {
		return ti.Pos()
	}
	return parse.Unparen(call.Fun).Pos()
}

// countIdentTokens counts the identifier tokens spelled name in [start, end)
// that are not member names.
func (c *source) countIdentTokens(start, end int, name string) int {
	n := 0
	for i := c.firstToken(start); i < len(c.file.Tokens) && c.file.Tokens[i].Start < end; i++ {
		t := c.file.Tokens[i]
		if t.Kind == parse.Identifier && string(c.src[t.Start:t.End]) == name && !c.afterMember(i) {
			n++
		}
	}
	return n
}

// lineText is the source line around off, trimmed (for messages).
func (c *source) lineText(off int) string {
	start := off
	for start > 0 && c.src[start-1] != '\n' {
		start--
	}
	return oneLine(string(c.src[start:lineEnd(c.src, off)]))
}

// headerDeclaring returns the local header (#include "...", read as the
// analysis reads them for macros) that mentions name, or "".
func (c *portCtx) headerDeclaring(name string) string {
	if c.headerTexts == nil {
		c.headerTexts = map[string]string{}
		for _, h := range analysis.LocalHeaders(c.file.Src.Name, c.src, analysis.IncludeDirs) {
			if b, err := os.ReadFile(h); err == nil {
				c.headerTexts[h] = codeOnly(string(b))
			}
		}
	}
	for h, text := range c.headerTexts {
		if mentions(text, name) && !c.inProgram(h) {
			return h
		}
	}
	return ""
}

// inProgram reports whether path is one of the files a whole-program
// port writes (Options.ProgramFiles).
func (c *portCtx) inProgram(path string) bool {
	if len(c.opts.ProgramFiles) == 0 {
		return false
	}
	abs, err := filepath.Abs(path)
	return err == nil && c.opts.ProgramFiles[abs]
}

// codeOnly blanks the comments and string and character literals of C++
// text, so that a name in `#define VARIANT "pull_vector"` or in a comment
// is not taken for a use.
func codeOnly(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			b[i], b[i+1] = ' ', ' '
			j := i + 2
			for ; j < len(b) && !(b[j] == '*' && j+1 < len(b) && b[j+1] == '/'); j++ {
				if b[j] != '\n' {
					b[j] = ' '
				}
			}
			for k := j; k < len(b) && k < j+2; k++ {
				b[k] = ' '
			}
			i = j + 1
		case b[i] == '"' || (b[i] == '\'' && (i == 0 || !isIdentByte(b[i-1]))): // not a digit separator (1'000)
			q := b[i]
			b[i] = ' '
			for i++; i < len(b) && b[i] != q && b[i] != '\n'; i++ {
				if b[i] == '\\' && i+1 < len(b) {
					b[i] = ' '
					i++
				}
				b[i] = ' '
			}
			if i < len(b) && b[i] == q {
				b[i] = ' '
			}
		}
	}
	return string(b)
}

// forwardedKeys lists the kernel parameters a forwarder's buffer reaches,
// through further forwarders too.
func (c *portCtx) forwardedKeys(f *forwarder) []paramKey {
	var keys []paramKey
	seen := map[paramKey]bool{}
	var walk func(f *forwarder)
	walk = func(f *forwarder) {
		if seen[f.key] {
			return
		}
		seen[f.key] = true
		for _, l := range f.launches {
			keys = appendKey(keys, paramKey{l.site.kernel, l.arg})
		}
		for _, k := range f.next {
			walk(c.forwarderOf(k.fn, k.idx))
		}
	}
	walk(f)
	return keys
}

// forwardConflict says which kernel parameter reached through f is not
// ported, or "".
func (c *portCtx) forwardConflict(v *hostVar, f *forwarder) string {
	for _, k := range c.forwardedKeys(f) {
		if !containsInt(c.ported[k.fn], k.idx) {
			return fmt.Sprintf("%s is passed to %s, which passes it on to %s, whose parameter %s is not ported; choose it too (--array %s:%s) or neither",
				v.sym.Name, f.key.fn.Name, k.fn.Name, k.fn.Params[k.idx].Name, k.fn.Name, k.fn.Params[k.idx].Name)
		}
	}
	return ""
}

func containsInt(s []int, x int) bool {
	for _, e := range s {
		if e == x {
			return true
		}
	}
	return false
}

// paramIndex returns the index of the parameter sym of fn, or -1.
func paramIndex(fn *parse.FuncDecl, id *parse.Ident) int {
	sym := fn.Scope.Lookup(id.Name, id.Pos())
	if sym == nil || !sym.Param {
		return -1
	}
	for i, p := range fn.Params {
		if p.Name == id.Name {
			return i
		}
	}
	return -1
}

// forwardedVars returns the caller buffers behind a forwarder parameter
// (through chains of forwarders), and the forwarders passed through. A
// call whose argument is not a traceable buffer makes the whole chain
// untraceable: the call and a message are returned instead.
func (c *portCtx) forwardedVars(f *forwarder) ([]*hostVar, []*forwarder, parse.Node, string) {
	var vars []*hostVar
	var chain []*forwarder
	seen := map[paramKey]bool{}
	var walk func(f *forwarder) (parse.Node, string)
	walk = func(f *forwarder) (parse.Node, string) {
		if seen[f.key] {
			return nil, ""
		}
		seen[f.key] = true
		chain = append(chain, f)
		for _, call := range f.calls {
			id, ok := parse.Unparen(call.arg).(*parse.Ident)
			if !ok {
				return call.call, fmt.Sprintf("%s is called with `%s` for its parameter %s, not a pointer variable bamgen can trace",
					f.key.fn.Name, oneLine(c.text(call.arg)), f.key.fn.Params[f.key.idx].Name)
			}
			if j := paramIndex(call.caller, id); j >= 0 {
				g := c.forwarderOf(call.caller, j)
				if g.why != "" {
					return call.call, fmt.Sprintf("%s is called with %s, a parameter of %s, and %s", f.key.fn.Name, id.Name, call.caller.Name, g.why)
				}
				if at, why := walk(g); why != "" {
					return at, why
				}
				continue
			}
			sym := call.caller.Scope.Lookup(id.Name, id.Pos())
			if sym == nil {
				return call.call, fmt.Sprintf("%s is called with %s, which is not a local variable of %s", f.key.fn.Name, id.Name, call.caller.Name)
			}
			if _, isVar := sym.Decl.(*parse.VarDecl); !isVar {
				return call.call, fmt.Sprintf("%s is called with %s, which is not a local variable of %s", f.key.fn.Name, id.Name, call.caller.Name)
			}
			vars = append(vars, c.hostVarFor(call.caller, sym))
		}
		return nil, ""
	}
	if at, why := walk(f); why != "" {
		return nil, nil, at, why
	}
	return vars, chain, nil, ""
}

// forwarderOfArg returns the forwarder behind launch argument idx when it
// is a parameter of the launching host function, or nil.
func (c *portCtx) forwarderOfArg(l *launchSite, idx int) *forwarder {
	id := argIdent(l, idx)
	if id == nil || l.fn == nil || l.fn.IsDevice() || (l.api != nil && l.api.array != nil) {
		return nil
	}
	j := paramIndex(l.fn, id)
	if j < 0 {
		return nil
	}
	return c.forwarderOf(l.fn, j)
}

// forwardOp classifies a buffer passed whole to a forwarding function.
func (c *portCtx) forwardOp(id *parse.Ident, call *parse.CallExpr, arg parse.Node) (hostOp, bool) {
	callee := c.hostCallee(call)
	j := indexOf(call.Args, arg)
	if callee == nil || j < 0 || parse.Unparen(call.Args[j]) != parse.Expr(id) {
		return hostOp{}, false
	}
	if f := c.forwarderOf(callee, j); f.why != "" {
		return hostOp{}, false
	}
	return hostOp{kind: opForward, node: id, call: call, arg: j}, true
}

// addForwarder records that the plan passes a bam::array through f (and
// through the forwarders f passes it on to).
func (c *portCtx) addForwarder(hp *hostPlan, f *forwarder) {
	if hp.fwdSeen[f] {
		return
	}
	hp.fwdSeen[f] = true
	hp.fwds = append(hp.fwds, f)
	for _, k := range f.next {
		c.addForwarder(hp, c.forwarderOf(k.fn, k.idx))
	}
}

// emitForwarders rewrites the parameter type of every forwarder the plan
// passes a bam::array through (and of its prototypes), converts its
// launch arguments where a template kernel needs it, and its copies and
// fills of the buffer to runtime calls.
func (c *portCtx) emitForwarders(hp *hostPlan) {
	for _, f := range hp.fwds {
		for _, op := range f.copies {
			d := templates.Patch{Array: templates.Array{RT: rtName, Bam: f.key.fn.Params[f.key.idx].Name}, Offset: "0", Bytes: oneLine(c.text(op.bytes))}
			switch op.kind {
			case opDownload:
				d.Op, d.Src = "copy_out", oneLine(c.text(op.other))
			case opUpload:
				d.Op, d.Src = "memcpy", oneLine(c.text(op.other))
			case opMemset0, opMemset:
				d.Op, d.Src = "memset", oneLine(c.text(op.other))
			case opNone, opMalloc, opManaged, opPinned, opFree, opLaunch, opNull, opForeign, opCopy, opSwap, opD2D, opForward, opDevPtr, opOther:
				continue // only copies and fills are recorded (forwardUse)
			}
			c.replaceStmt(hp, HostMemory, op.stmt, templates.Render("patch", d))
			hp.fns[f.key.fn] = true
		}
		ps := paramSet{f.key.fn, []int{f.key.idx}}
		edits := c.paramTypeEdits(ps)
		for _, proto := range c.prototypesOf(f.key.fn) {
			edits = append(edits, c.paramTypeEdits(paramSet{proto, ps.set})...)
		}
		for _, e := range edits {
			e.Rewrite = Launches.String()
			hp.edits = append(hp.edits, e)
		}
		p := f.key.fn.Params[f.key.idx]
		elem := strings.TrimSpace(string(c.src[p.Type.BaseSpan.Start:p.Type.BaseSpan.Stop]))
		for _, l := range f.launches {
			if needsConstConversion(l.site, l.arg) {
				a := l.site.args[l.arg]
				hp.edits = append(hp.edits, edit.Edit{Start: a.Pos(), End: a.End(), New: "bam::array<const " + elem + ">(" + p.Name + ")", Rewrite: Launches.String()})
			}
		}
	}
}

// needsConstConversion: a template kernel launched without explicit
// template arguments cannot deduce T in bam::array<const T> from
// bam::array<float>.
func needsConstConversion(l *launchSite, arg int) bool {
	k := l.kernel
	if k == nil || k.Template == nil || arg >= len(k.Params) || !k.Params[arg].Type.Const || l.expr == nil {
		return false
	}
	_, explicit := l.expr.Kernel.(*parse.TemplateIdent)
	return !explicit
}

// guardedFree recognises `if (p) { cudaFree(p); p = 0; }` (also `p !=
// NULL`, a check wrapper around the call, no braces, no reset): the
// original frees the buffer once if it was allocated. It returns the if
// statement, its enclosing block, and whether id is the condition's use.
func guardedFree(fn *parse.FuncDecl, sym *parse.Symbol, id *parse.Ident, parents []parse.Node) (*parse.IfStmt, *parse.BlockStmt, bool, bool) {
	is := func(e parse.Expr) bool {
		x, ok := parse.UnparenCasts(e).(*parse.Ident)
		return ok && fn.Scope.Lookup(x.Name, x.Pos()) == sym
	}
	for i := len(parents) - 1; i >= 0; i-- {
		ifs, ok := parents[i].(*parse.IfStmt)
		if !ok {
			continue
		}
		if ifs.Init != nil || ifs.Else != nil {
			return nil, nil, false, false
		}
		cond := parse.Unparen(ifs.Cond)
		if b, ok := cond.(*parse.BinaryExpr); ok && b.Op == "!=" && isNullLiteral(b.Y) {
			cond = b.X
		}
		if !is(cond) {
			return nil, nil, false, false
		}
		var stmts []parse.Stmt
		if blk, ok := ifs.Then.(*parse.BlockStmt); ok {
			stmts = blk.Stmts
		} else {
			stmts = []parse.Stmt{ifs.Then}
		}
		freed := false
		for j, s := range stmts {
			es, ok := s.(*parse.ExprStmt)
			if !ok {
				return nil, nil, false, false
			}
			e := parse.Unparen(es.X)
			for { // CHECK(cudaFree(p))
				call, ok := e.(*parse.CallExpr)
				if !ok || len(call.Args) != 1 || strings.HasPrefix(parse.ShortFuncName(call.Fun), "cuda") {
					break
				}
				e = parse.Unparen(call.Args[0])
			}
			switch x := e.(type) {
			case *parse.CallExpr:
				if j != 0 || parse.ShortFuncName(x.Fun) != "cudaFree" || len(x.Args) != 1 || !is(x.Args[0]) {
					return nil, nil, false, false
				}
				freed = true
			case *parse.BinaryExpr:
				if j != 1 || x.Op != "=" || !is(x.X) || !isNullLiteral(x.Y) {
					return nil, nil, false, false
				}
			default:
				return nil, nil, false, false
			}
		}
		if !freed || i == 0 {
			return nil, nil, false, false
		}
		blk, ok := parents[i-1].(*parse.BlockStmt)
		if !ok {
			return nil, nil, false, false
		}
		onCond := id.Pos() >= ifs.Cond.Pos() && id.End() <= ifs.Cond.End()
		return ifs, blk, onCond, true
	}
	return nil, nil, false, false
}
