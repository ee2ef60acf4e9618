package port

import (
	"fmt"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/parse"
)

// Launches through the CUDA runtime API. Two forms can be ported exactly:
//
//   - cudaLaunchKernelEx(&cfg, k, a, b, n), the C++ template: the kernel
//     arguments are written out and converted to the parameter types, like
//     the arguments of k<<<...>>>(a, b, n); each becomes the bam::array.
//   - cudaLaunchKernel((void*)k, grid, block, args, shmem, stream) and the
//     other void** forms (cudaLaunchCooperativeKernel, cudaLaunchKernelExC),
//     where args is a local `void* args[] = {&a, &b, &n};`. The runtime
//     copies sizeof(parameter) bytes from each args[i]; once the parameter
//     is a bam::array, &a_bam points at exactly that many bytes of the
//     argument (bam::array<T> and bam::array<const T> have the same members,
//     whatever T's constness), so the entry &a becomes &a_bam. That holds
//     only when bamgen sees every entry that reaches the launch: the array
//     is initialised with braces, one entry per parameter, and is passed
//     to launch calls and nowhere else (nothing can store into it).

// apiSite is a kernel launch through the runtime API.
type apiSite struct {
	call   *parse.CallExpr
	launch analysis.Launch
	array  *argsArray // the void** forms' argument array, when bamgen can rewrite it
	why    string     // why the void** forms' argument array cannot be rewritten
}

// argsArray is a local `void* args[] = {&a, &b, &n};` passed to launches.
type argsArray struct {
	sym   *parse.Symbol
	decl  *parse.VarDecl
	init  *parse.InitListExpr
	sites []*launchSite // the launches that pass it, in source order
	why   string        // why it cannot be rewritten, "" when it can
}

// apiLaunchSite is the site of a runtime launch call naming a kernel.
func apiLaunchSite(l analysis.Launch, kernels map[string][]*parse.FuncDecl) *launchSite {
	site := &launchSite{api: &apiSite{call: l.Call, launch: l}, args: l.Args}
	if ks := kernels[l.Kernel]; len(ks) == 1 {
		site.kernel = ks[0]
	}
	if l.ArgsArray == nil && len(l.Args) == 0 && l.Via != "cudaLaunchKernelEx" {
		site.api.why = fmt.Sprintf("the call passes no argument array to %s", l.Via)
	}
	return site
}

// resolveArgsArrays finds the argument array of every void** launch and
// decides, once per array, whether its entries can be rewritten.
func (c *launchIndex) resolveArgsArrays(sites []*launchSite) {
	arrays := map[*parse.Symbol]*argsArray{}
	var order []*argsArray
	for _, site := range sites {
		if site.api == nil || site.api.launch.ArgsArray == nil {
			continue
		}
		sym, why := c.argsArraySymbol(site)
		if why != "" {
			site.api.why = argsArrayMessage(site, why)
			continue
		}
		arr := arrays[sym]
		if arr == nil {
			arr = &argsArray{sym: sym, decl: sym.Decl.(*parse.VarDecl)}
			arrays[sym] = arr
			order = append(order, arr)
		}
		arr.sites = append(arr.sites, site)
	}
	for _, arr := range order {
		arr.why = c.argsArrayProblem(arr)
		for _, site := range arr.sites {
			if arr.why != "" {
				site.api.why = argsArrayMessage(site, arr.why)
				continue
			}
			site.api.array = arr
			site.args = arr.init.Elems
		}
	}
}

// argsArraySymbol resolves the launch's void** argument to a local array.
func (c *launchIndex) argsArraySymbol(site *launchSite) (*parse.Symbol, string) {
	e := site.api.launch.ArgsArray
	sym := symbolOf(site.fn, parse.UnparenCasts(e))
	if sym == nil {
		return nil, fmt.Sprintf("`%s` is not a local array of %s", oneLine(c.text(e)), site.fn.Name)
	}
	vd := sym.Decl.(*parse.VarDecl)
	if vd.Type == nil || len(vd.Type.Array) != 1 {
		return nil, fmt.Sprintf("%s is not an array declared in %s (it is `%s`)", sym.Name, site.fn.Name, typeText(vd.Type))
	}
	return sym, ""
}

// argsArrayProblem says why an argument array's entries are not all that
// reaches its launches, or "".
func (c *launchIndex) argsArrayProblem(arr *argsArray) string {
	for _, s := range arr.decl.Specifiers {
		if s == "static" || s == "thread_local" {
			return fmt.Sprintf("%s is %s, so it keeps the addresses of the first call's variables", arr.sym.Name, s)
		}
	}
	init, ok := arr.decl.Init.(*parse.InitListExpr)
	if !ok {
		return fmt.Sprintf("%s is not initialised with braces where it is declared", arr.sym.Name)
	}
	arr.init = init
	for _, site := range arr.sites {
		if k := site.kernel; k != nil && len(init.Elems) != len(k.Params) {
			return fmt.Sprintf("%s has %s for the %d parameters of %s", arr.sym.Name, plural(len(init.Elems), "entry", "entries"), len(k.Params), k.Name)
		}
	}
	return c.argsArrayOtherUse(arr)
}

// argsArrayOtherUse finds a use of the array other than as the argument
// array of one of its launches: an assignment to an entry, a pointer to it
// kept or passed on. Any of them could change what a launch reads.
func (c *launchIndex) argsArrayOtherUse(arr *argsArray) string {
	fn := arr.sites[0].fn
	why := ""
	parse.WithStack(fn.Body, func(n parse.Node, parents []parse.Node) bool {
		id, ok := n.(*parse.Ident)
		if why != "" || !ok || id.Name != arr.sym.Name || fn.Scope.Lookup(id.Name, id.Pos()) != arr.sym {
			return why == ""
		}
		if !passedToLaunch(arr, id, parents) {
			at := parse.Node(id)
			if s := innermostStmt(parents); s != nil {
				at = s
			}
			why = fmt.Sprintf("%s is also used in `%s`", arr.sym.Name, oneLine(c.text(at)))
		}
		return true
	})
	return why
}

// passedToLaunch reports whether id (through parentheses and casts) is the
// argument array of one of arr's launches.
func passedToLaunch(arr *argsArray, id *parse.Ident, parents []parse.Node) bool {
	cur := parse.Node(id)
	for i := len(parents) - 1; i >= 0; i-- {
		switch p := parents[i].(type) {
		case *parse.ParenExpr, *parse.CastExpr:
			cur = p
			continue
		case *parse.CallExpr:
			for _, site := range arr.sites {
				if site.api.call == p && parse.Node(site.api.launch.ArgsArray) == cur {
					return true
				}
			}
		}
		return false
	}
	return false
}

// argsArrayMessage words a refused argument array: what blocks it and the
// form bamgen can rewrite.
func argsArrayMessage(site *launchSite, why string) string {
	return fmt.Sprintf("%s is launched through %s with an argument array bamgen cannot rewrite: %s; declare it in %s as `void* args[] = {&d_a, &n};`, one &VAR entry per kernel parameter, and pass it only to launch calls (or launch with <<<>>> or cudaLaunchKernelEx(&cfg, %s, d_a, n))",
		site.kernelName(), site.api.launch.Via, why, site.fn.Name, site.kernelName())
}

// entryMessage explains why the entry for a ported parameter cannot be
// traced to a host variable.
func (c *launchIndex) entryMessage(l *launchSite, key paramKey) string {
	arr := l.api.array
	return fmt.Sprintf("entry %d of %s for %s:%s is `%s`, not the address of a local pointer variable of %s, so bamgen cannot find its allocation; initialise %s with &VAR entries (`&d_a`)",
		key.idx, arr.sym.Name, key.fn.Name, key.fn.Params[key.idx].Name, oneLine(c.text(l.args[key.idx])), l.fn.Name, arr.sym.Name)
}

// argIdent returns the variable the launch passes for parameter idx: the
// argument itself, or for an argument array the VAR of its `&VAR` entry.
func argIdent(l *launchSite, idx int) *parse.Ident {
	if idx >= len(l.args) {
		return nil
	}
	e := parse.Unparen(l.args[idx])
	if l.api != nil && l.api.array != nil {
		u, ok := parse.UnparenCasts(l.args[idx]).(*parse.UnaryExpr)
		if !ok || u.Op != "&" || u.Postfix {
			return nil
		}
		e = parse.Unparen(u.X)
	}
	id, _ := e.(*parse.Ident)
	return id
}

// entryOp classifies `&v` as an entry of a rewritable argument array: a
// launch use of v, one per launch passing the array (see hostOps).
func (c *portCtx) entryOp(id *parse.Ident, list *parse.InitListExpr, entry parse.Node, addrOnly bool) (hostOp, bool) {
	arr := c.argsArrayByInit(list)
	if arr == nil || !addrOnly {
		return hostOp{}, false
	}
	j := indexOf(list.Elems, entry)
	if j < 0 {
		return hostOp{}, false
	}
	return hostOp{kind: opLaunch, node: id, arg: j, launch: arr.sites[0], entry: arr}, true
}

func (c *launchIndex) argsArrayByInit(list *parse.InitListExpr) *argsArray {
	for _, l := range c.launches() {
		if l.api != nil && l.api.array != nil && l.api.array.init == list {
			return l.api.array
		}
	}
	return nil
}

// expandEntry turns the launch use of an argument array entry into one use
// per launch passing the array, so each launch's kernel is checked.
func expandEntry(op hostOp) []hostOp {
	if op.entry == nil {
		return []hostOp{op}
	}
	out := make([]hostOp, 0, len(op.entry.sites))
	for _, s := range op.entry.sites {
		o := op
		o.launch = s
		out = append(out, o)
	}
	return out
}

func indexOf(list []parse.Expr, n parse.Node) int {
	for i, e := range list {
		if parse.Node(e) == n {
			return i
		}
	}
	return -1
}

// apiLaunchStmt returns the statement that is exactly the API launch call,
// possibly inside an error check (`CUDA_CHECK(cudaLaunchKernelEx(...));`).
func apiLaunchStmt(l *launchSite) (*parse.ExprStmt, bool) {
	cur := parse.Node(l.api.call)
	for i := len(l.parents) - 1; i >= 0; i-- {
		switch p := l.parents[i].(type) {
		case *parse.ExprStmt:
			return p, parse.Node(p.X) == cur
		case *parse.CallExpr:
			if len(p.Args) != 1 || parse.Node(p.Args[0]) != cur {
				return nil, false
			}
		case *parse.ParenExpr, *parse.CastExpr:
		default:
			return nil, false
		}
		cur = l.parents[i]
	}
	return nil, false
}

// wrapEntryMessage: host-visible buffers get their bam::array right before
// each launch, after the argument array took the buffer's address.
func wrapEntryMessage(v *hostVar, op hostOp) string {
	return fmt.Sprintf("%s is host-visible memory, whose bam::array bamgen makes right after its allocation (managed or pinned memory, in the same block as every launch and free) or else right before each launch, but %s takes &%s earlier, where that array does not exist; declare %s after the allocation, pass %s directly (cudaLaunchKernelEx(&cfg, %s, %s, ...) or <<<>>>), or allocate it with cudaMalloc",
		v.sym.Name, op.entry.sym.Name, v.sym.Name, op.entry.sym.Name, v.sym.Name, op.launch.kernelName(), v.sym.Name)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
