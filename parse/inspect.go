package parse

// The one tree walker of bamgen. Every traversal (Inspect, WithStack, the
// launch and callee helpers in tree.go, the analyses and the port) goes
// through eachChild, so a node kind the parser learns is taught to every
// stage in one place.

// Inspect traverses the tree rooted at n in source order, calling f for
// each node; when f returns false, n's children are skipped. Types
// (*TypeRef) and parameters (*Param) are visited as nodes too. Unlike
// go/ast.Inspect, f is never called with nil.
func Inspect(n Node, f func(Node) bool) {
	if isNilNode(n) || !f(n) {
		return
	}
	eachChild(n, func(c Node) { Inspect(c, f) })
}

// WithStack is Inspect with ancestors, like go/ast/inspector's WithStack
// in pre-order only: f gets the node and the nodes enclosing it, outermost
// first (the root is stack[0]; n itself is not on the stack). The stack is
// reused: copy it to keep it. Returning false skips n's children.
func WithStack(n Node, f func(n Node, stack []Node) bool) {
	w := stackWalker{f: f, stack: make([]Node, 0, 32)}
	w.visit(n)
}

type stackWalker struct {
	f     func(Node, []Node) bool
	stack []Node
}

func (w *stackWalker) visit(n Node) {
	if isNilNode(n) || !w.f(n, w.stack) {
		return
	}
	w.stack = append(w.stack, n)
	eachChild(n, w.visit)
	w.stack = w.stack[:len(w.stack)-1]
}

// IsNil reports whether n is nil or a typed nil pointer (optional fields
// hold both); the walkers skip such nodes.
func IsNil(n Node) bool { return isNilNode(n) }

// isNilNode reports a nil interface or a typed nil pointer, both of which
// appear in optional fields.
func isNilNode(n Node) bool {
	switch n := n.(type) {
	case nil:
		return true
	case *TypeRef:
		return n == nil
	case *Param:
		return n == nil
	case *BlockStmt:
		return n == nil
	case *VarDecl:
		return n == nil
	case *InitListExpr:
		return n == nil
	case *CatchClause:
		return n == nil
	case *FuncDecl:
		return n == nil
	case *RecordDecl:
		return n == nil
	}
	return false
}

// eachChild calls visit for the children of n in source order; optional
// children may be nil (the walkers skip them).
func eachChild(n Node, visit func(Node)) {
	switch n := n.(type) {
	case *File:
		eachOf(n.Decls, visit)
	default:
		if !declChildren(n, visit) && !stmtChildren(n, visit) {
			exprChildren(n, visit)
		}
	}
}

func eachOf[T Node](list []T, visit func(Node)) {
	for _, x := range list {
		visit(x)
	}
}

// Optional Expr and Stmt fields become Nodes through these, so that a nil
// field is a nil Node, not a typed nil in an interface.
func expr(e Expr) Node {
	if e == nil {
		return nil
	}
	return e
}

func stmt(s Stmt) Node {
	if s == nil {
		return nil
	}
	return s
}

func declChildren(n Node, visit func(Node)) bool {
	switch n := n.(type) {
	case *FuncDecl:
		visit(n.Result)
		eachOf(n.Params, visit)
		visit(n.Body)
	case *Param:
		visit(n.Type)
		visit(expr(n.Default))
	case *VarDeclGroup:
		eachOf(n.Vars, visit)
	case *VarDecl:
		visit(n.Type)
		visit(expr(n.Init))
	case *NamespaceDecl:
		eachOf(n.Decls, visit)
	case *LinkageDecl:
		eachOf(n.Decls, visit)
	case *RecordDecl:
		eachOf(n.Members, visit)
	case *TypedefDecl:
		visit(n.Type)
	case *EnumDecl, *UsingDecl, *Opaque, *TypeRef:
	default:
		return false
	}
	return true
}

func stmtChildren(n Node, visit func(Node)) bool {
	switch n := n.(type) {
	case *BlockStmt:
		eachOf(n.Stmts, visit)
	case *DeclStmt:
		visit(n.Record)
		eachOf(n.Vars, visit)
	case *ExprStmt:
		visit(expr(n.X))
	case *IfStmt:
		visit(stmt(n.Init))
		visit(expr(n.Cond))
		visit(stmt(n.Then))
		visit(stmt(n.Else))
	case *ForStmt:
		visit(stmt(n.Init))
		visit(expr(n.Cond))
		visit(expr(n.Post))
		visit(stmt(n.Body))
	case *RangeForStmt:
		visit(n.Var)
		visit(expr(n.Range))
		visit(stmt(n.Body))
	case *WhileStmt:
		visit(expr(n.Cond))
		visit(stmt(n.Body))
	case *DoStmt:
		visit(stmt(n.Body))
		visit(expr(n.Cond))
	case *SwitchStmt:
		visit(expr(n.Cond))
		visit(stmt(n.Body))
	case *CaseStmt:
		visit(expr(n.Value))
	case *LabeledStmt:
		visit(stmt(n.Stmt))
	case *ReturnStmt:
		visit(expr(n.X))
	case *DeclInStmt:
		visit(n.Decl)
	case *TryStmt:
		visit(n.Body)
		eachOf(n.Handlers, visit)
	case *CatchClause:
		visit(n.Param)
		visit(n.Body)
	case *BranchStmt, *EmptyStmt, *OpaqueStmt:
	default:
		return false
	}
	return true
}

func exprChildren(n Node, visit func(Node)) {
	switch n := n.(type) {
	case *TemplateIdent:
		eachOf(n.Args, visit)
	case *BinaryExpr:
		visit(expr(n.X))
		visit(expr(n.Y))
	case *UnaryExpr:
		visit(expr(n.X))
	case *CondExpr:
		visit(expr(n.Cond))
		visit(expr(n.Then))
		visit(expr(n.Else))
	case *ParenExpr:
		visit(expr(n.X))
	case *IndexExpr:
		visit(expr(n.X))
		visit(expr(n.Index))
	case *MemberExpr:
		visit(expr(n.X))
		eachOf(n.Args, visit)
	case *CallExpr:
		visit(expr(n.Fun))
		eachOf(n.Args, visit)
	case *LaunchExpr:
		visit(expr(n.Kernel))
		eachOf(n.Config, visit)
		eachOf(n.Args, visit)
	case *CastExpr:
		// A functional cast `T(x)` and a C cast `(T)x` both have the type first.
		visit(n.Type)
		visit(expr(n.X))
	case *SizeofExpr:
		visit(n.Type)
		visit(expr(n.X))
	case *InitListExpr:
		visit(n.Type)
		eachOf(n.Elems, visit)
	case *LambdaExpr:
		eachOf(n.Params, visit)
		visit(n.Body)
	case *NewExpr:
		visit(n.Type) // new T[count](args) / new T[count]{elems}
		visit(expr(n.Count))
		eachOf(n.Args, visit)
	case *DeleteExpr:
		visit(expr(n.X))
	case *ParenListExpr:
		eachOf(n.Args, visit)
	}
}

// Funcs returns every function in the file, including those in
// namespaces, extern "C" blocks and classes, in source order.
func (f *File) Funcs() []*FuncDecl {
	var out []*FuncDecl
	var visit func(ds []Decl)
	visit = func(ds []Decl) {
		for _, d := range ds {
			switch d := d.(type) {
			case *FuncDecl:
				out = append(out, d)
			case *NamespaceDecl:
				visit(d.Decls)
			case *LinkageDecl:
				visit(d.Decls)
			case *RecordDecl:
				visit(d.Members)
			}
		}
	}
	visit(f.Decls)
	return out
}

// Kernels returns the `__global__` functions (definitions and prototypes).
func (f *File) Kernels() []*FuncDecl {
	var out []*FuncDecl
	for _, fn := range f.Funcs() {
		if fn.IsKernel() {
			out = append(out, fn)
		}
	}
	return out
}

// Launches returns every `kernel<<<...>>>(...)` in the file, in source order.
func (f *File) Launches() []*LaunchExpr {
	var out []*LaunchExpr
	Inspect(f, func(n Node) bool {
		if l, ok := n.(*LaunchExpr); ok {
			out = append(out, l)
		}
		return true
	})
	return out
}

// Pos and End make *File a Node covering the whole source.
func (f *File) Pos() int { return 0 }

// End returns the length of the source.
func (f *File) End() int {
	if f.Src == nil {
		return 0
	}
	return len(f.Src.Bytes)
}
