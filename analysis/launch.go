package analysis

import (
	"strings"

	"github.com/bamgen/bamgen/parse"
)

// Launch is one launch of a kernel: `kernel<<<...>>>(...)`, or a call of a
// runtime launch function (cudaLaunchKernel and friends), which names the
// kernel through a function pointer.
type Launch struct {
	Kernel string
	Caller string            // the enclosing function's name
	Func   *parse.FuncDecl   // the enclosing function
	Stack  []parse.Node      // the nodes around the launch inside Func's body, outermost (the body) first
	Expr   *parse.LaunchExpr // the <<<>>> launch; nil for a runtime API launch
	Call   *parse.CallExpr   // the runtime API call; nil for <<<>>>
	Via    string            // the runtime function ("cudaLaunchKernel"); "" for <<<>>>

	// Config is the launch configuration as written: grid, block and, when
	// given, shared memory and stream. Empty for cudaLaunchKernelEx(C),
	// whose configuration is the cudaLaunchConfig_t ConfigStruct points to.
	Config       []parse.Expr
	ConfigStruct parse.Expr
	// Args are the kernel arguments in parameter order, when the launch
	// spells them out (<<<>>>, cudaLaunchKernelEx). The void** forms pass
	// their addresses in ArgsArray instead, and Args is empty.
	Args      []parse.Expr
	ArgsArray parse.Expr
}

// Node is the launch expression: the <<<>>> launch or the API call.
func (l Launch) Node() parse.Node {
	if l.Expr != nil {
		return l.Expr
	}
	return l.Call
}

// Pos and End are the launch expression's byte range.
func (l Launch) Pos() int { return l.Node().Pos() }
func (l Launch) End() int { return l.Node().End() }

// apiLaunch describes where a runtime launch function takes what: the
// argument positions of the kernel, the configuration, the
// cudaLaunchConfig_t, and the void** argument array (-1: not taken).
// argsFrom >= 0 means the kernel arguments follow directly from there.
type apiLaunch struct {
	kernel, configStruct, argsArray, argsFrom int
	config                                    []int
}

// apiLaunches are the CUDA runtime's kernel launch functions (C and C++
// forms; the C++ templates take the same positions as the C functions,
// except cudaLaunchKernelEx, which takes the kernel arguments themselves).
var apiLaunches = map[string]apiLaunch{
	"cudaLaunchKernel":            {kernel: 0, config: []int{1, 2, 4, 5}, configStruct: -1, argsArray: 3, argsFrom: -1},
	"cudaLaunchCooperativeKernel": {kernel: 0, config: []int{1, 2, 4, 5}, configStruct: -1, argsArray: 3, argsFrom: -1},
	"cudaLaunchKernelExC":         {kernel: 1, configStruct: 0, argsArray: 2, argsFrom: -1},
	"cudaLaunchKernelEx":          {kernel: 1, configStruct: 0, argsArray: -1, argsFrom: 2},
}

// launchesIn lists the kernel launches inside fd, in source order. It is
// bamgen's one launch finder: the port reads File.Launches.
func launchesIn(fd *parse.FuncDecl) []Launch {
	var out []Launch
	parse.WithStack(fd.Body, func(n parse.Node, stack []parse.Node) bool {
		var l Launch
		switch n := n.(type) {
		case *parse.LaunchExpr:
			l = Launch{Kernel: launchedKernel(n.Kernel), Expr: n, Config: n.Config, Args: n.Args}
			if k := guardedKernel(n, stack); k != "" {
				l.Kernel = k
			}
		case *parse.CallExpr:
			var ok bool
			if l, ok = runtimeLaunch(n); !ok {
				return true
			}
		default:
			return true
		}
		l.Caller, l.Func, l.Stack = fd.Name, fd, append([]parse.Node(nil), stack...)
		out = append(out, l)
		return true
	})
	return out
}

// launchedKernel names the kernel a <<<>>> launch starts. A launch ported
// before picks between a kernel and its direct clone,
// `(bam::all_direct(a) ? k_bam_direct : k)<<<...>>>` (transform/port,
// clones.go): that is a launch of k, so porting the output again sees the
// same launches and decides the same.
func launchedKernel(k parse.Expr) string {
	if c, ok := parse.Unparen(k).(*parse.CondExpr); ok {
		direct := parse.LastName(parse.CalleeName(c.Then))
		kernel := parse.LastName(parse.CalleeName(c.Else))
		if kernel != "" && direct == kernel+"_bam_direct" {
			return kernel
		}
		return ""
	}
	return parse.LastName(parse.CalleeName(k))
}

// guardedKernel names the kernel whose direct clone a launch in the
// guarded form starts: a launch ported before whose kernel an
// access-pattern rewrite changed (odt) became
//
//	if (bam::all_direct(a)) { k_bam_direct<<<...>>>(...); } else { k<<<...>>>(...); }
//
// (transform/port, clones.go), and the first launch is a launch of k too,
// as in the picking form. "" for any other launch.
func guardedKernel(l *parse.LaunchExpr, stack []parse.Node) string {
	kernel, ok := strings.CutSuffix(parse.LastName(parse.CalleeName(l.Kernel)), "_bam_direct")
	n := len(stack)
	if !ok || kernel == "" || n < 3 {
		return ""
	}
	s, _ := stack[n-1].(*parse.ExprStmt)
	then, _ := stack[n-2].(*parse.BlockStmt)
	guard, _ := stack[n-3].(*parse.IfStmt)
	if s == nil || then == nil || guard == nil || s.X != parse.Expr(l) || guard.Then != parse.Stmt(then) || len(then.Stmts) != 1 ||
		guard.Init != nil || !isAllDirect(guard.Cond) {
		return ""
	}
	other, _ := guard.Else.(*parse.BlockStmt)
	if other == nil || len(other.Stmts) != 1 {
		return ""
	}
	if es, ok := other.Stmts[0].(*parse.ExprStmt); ok {
		if le, ok := es.X.(*parse.LaunchExpr); ok && parse.LastName(parse.CalleeName(le.Kernel)) == kernel {
			return kernel
		}
	}
	return ""
}

// isAllDirect: e is a call of bam::all_direct.
func isAllDirect(e parse.Expr) bool {
	c, ok := parse.Unparen(e).(*parse.CallExpr)
	return ok && parse.CalleeName(c.Fun) == "bam::all_direct"
}

// runtimeLaunch recognises a call of a runtime launch function whose
// kernel argument names a function: `(void*)k`, `(const void*)&k<T>`, `k`.
func runtimeLaunch(c *parse.CallExpr) (Launch, bool) {
	via := parse.LastName(parse.CalleeName(c.Fun))
	api, ok := apiLaunches[via]
	if !ok || api.kernel >= len(c.Args) {
		return Launch{}, false
	}
	kernel := kernelOperand(c.Args[api.kernel])
	if kernel == "" {
		return Launch{}, false // a function pointer variable or table: not a name
	}
	l := Launch{Kernel: kernel, Call: c, Via: via, Config: []parse.Expr{}, Args: []parse.Expr{}}
	for _, i := range api.config {
		if i < len(c.Args) {
			l.Config = append(l.Config, c.Args[i])
		}
	}
	l.ConfigStruct = argAt(c, api.configStruct)
	l.ArgsArray = argAt(c, api.argsArray)
	if api.argsFrom >= 0 && api.argsFrom <= len(c.Args) {
		l.Args = c.Args[api.argsFrom:]
	}
	return l, true
}

func argAt(c *parse.CallExpr, i int) parse.Expr {
	if i < 0 || i >= len(c.Args) {
		return nil
	}
	return c.Args[i]
}

// kernelOperand names the function a launch call's kernel argument
// points to, through casts, parentheses, & and template arguments.
func kernelOperand(e parse.Expr) string {
	e = parse.UnparenCasts(e)
	if u, ok := e.(*parse.UnaryExpr); ok && u.Op == "&" {
		e = parse.UnparenCasts(u.X)
	}
	switch e.(type) {
	case *parse.Ident, *parse.TemplateIdent:
		return parse.ShortFuncName(e)
	}
	return ""
}
