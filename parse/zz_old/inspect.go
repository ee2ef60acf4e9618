package parse

// Inspect traverses the tree rooted at n in source order, calling f for
// each node; when f returns false, n's children are skipped. Types
// (*TypeRef) and parameters (*Param) are visited as nodes too. Unlike
// go/ast.Inspect, f is never called with nil.
func Inspect(n Node, f func(Node) bool) {
	if isNilNode(n) || !f(n) {
		return
	}
	switch n := n.(type) {
	case *File:
		for _, d := range n.Decls {
			Inspect(d, f)
		}
	default:
		if !inspectDecl(n, f) && !inspectStmt(n, f) {
			inspectExpr(n, f)
		}
	}
}

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
	}
	return false
}

func inspectList[T Node](list []T, f func(Node) bool) {
	for _, x := range list {
		Inspect(x, f)
	}
}

// walk visits optional children, skipping nil ones.
func walk(f func(Node) bool, kids ...Node) {
	for _, k := range kids {
		Inspect(k, f)
	}
}

func inspectDecl(n Node, f func(Node) bool) bool {
	switch n := n.(type) {
	case *FuncDecl:
		walk(f, n.Result)
		inspectList(n.Params, f)
		walk(f, n.Body)
	case *Param:
		walk(f, n.Type, n.Default)
	case *VarDeclGroup:
		inspectList(n.Vars, f)
	case *VarDecl:
		walk(f, n.Type, n.Init)
	case *NamespaceDecl:
		inspectList(n.Decls, f)
	case *LinkageDecl:
		inspectList(n.Decls, f)
	case *RecordDecl:
		inspectList(n.Members, f)
	case *TypedefDecl:
		walk(f, n.Type)
	case *EnumDecl, *UsingDecl, *Opaque, *TypeRef:
	default:
		return false
	}
	return true
}

func inspectStmt(n Node, f func(Node) bool) bool {
	switch n := n.(type) {
	case *BlockStmt:
		inspectList(n.Stmts, f)
	case *DeclStmt:
		walk(f, n.Record)
		inspectList(n.Vars, f)
	case *ExprStmt:
		walk(f, n.X)
	case *IfStmt:
		walk(f, n.Init, n.Cond, n.Then, n.Else)
	case *ForStmt:
		walk(f, n.Init, n.Cond, n.Post, n.Body)
	case *RangeForStmt:
		walk(f, n.Var, n.Range, n.Body)
	case *WhileStmt:
		walk(f, n.Cond, n.Body)
	case *DoStmt:
		walk(f, n.Body, n.Cond)
	case *SwitchStmt:
		walk(f, n.Cond, n.Body)
	case *CaseStmt:
		walk(f, n.Value)
	case *LabeledStmt:
		walk(f, n.Stmt)
	case *ReturnStmt:
		walk(f, n.X)
	case *DeclInStmt:
		walk(f, n.Decl)
	case *TryStmt:
		walk(f, n.Body)
		inspectList(n.Handlers, f)
	case *CatchClause:
		walk(f, n.Param, n.Body)
	case *BranchStmt, *EmptyStmt, *OpaqueStmt:
	default:
		return false
	}
	return true
}

func inspectExpr(n Node, f func(Node) bool) bool {
	switch n := n.(type) {
	case *TemplateIdent:
		inspectList(n.Args, f)
	case *BinaryExpr:
		walk(f, n.X, n.Y)
	case *UnaryExpr:
		walk(f, n.X)
	case *CondExpr:
		walk(f, n.Cond, n.Then, n.Else)
	case *ParenExpr:
		walk(f, n.X)
	case *IndexExpr:
		walk(f, n.X, n.Index)
	case *MemberExpr:
		walk(f, n.X)
		inspectList(n.Args, f)
	case *CallExpr:
		walk(f, n.Fun)
		inspectList(n.Args, f)
	case *LaunchExpr:
		walk(f, n.Kernel)
		inspectList(n.Config, f)
		inspectList(n.Args, f)
	case *CastExpr:
		inspectCast(n, f)
	case *SizeofExpr:
		walk(f, n.Type, n.X)
	case *InitListExpr:
		walk(f, n.Type)
		inspectList(n.Elems, f)
	case *LambdaExpr:
		inspectList(n.Params, f)
		walk(f, n.Body)
	case *NewExpr:
		walk(f, n.Type, n.Count)
		inspectList(n.Args, f)
	case *DeleteExpr:
		walk(f, n.X)
	case *ParenListExpr:
		inspectList(n.Args, f)
	case *Ident, *BasicLit, *OpaqueExpr:
	default:
		return false
	}
	return true
}

// inspectCast visits a cast's type and operand in source order: a
// functional cast `T(x)` and a C cast `(T)x` both have the type first.
func inspectCast(n *CastExpr, f func(Node) bool) {
	walk(f, n.Type, n.X)
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
