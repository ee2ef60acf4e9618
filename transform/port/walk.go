package port

import "github.com/bamgen/bamgen/parse"

// walk visits n and its descendants depth-first in source order. visit gets
// the node and its ancestors (innermost last); returning false skips the
// node's children. The rewrites need the ancestors to tell how a use of an
// array is embedded (`p[i]`, `*(p+i)`, `&p[i]` inside atomicAdd, ...), which
// a plain Inspect does not give.
func walk(n parse.Node, visit func(n parse.Node, parents []parse.Node) bool) {
	stack := make([]parse.Node, 0, 32)
	var rec func(n parse.Node)
	rec = func(n parse.Node) {
		if isNil(n) {
			return
		}
		if !visit(n, stack) {
			return
		}
		stack = append(stack, n)
		eachChild(n, rec)
		stack = stack[:len(stack)-1]
	}
	rec(n)
}

// isNil reports whether n is nil or a typed nil pointer in an interface.
func isNil(n parse.Node) bool {
	if n == nil {
		return true
	}
	switch v := n.(type) {
	case *parse.BlockStmt:
		return v == nil
	case *parse.FuncDecl:
		return v == nil
	case *parse.TypeRef:
		return v == nil
	case *parse.VarDecl:
		return v == nil
	}
	return false
}

// eachChild calls add for the syntax children of n in source order (nil
// children included; walk skips them). Types are not descended into:
// arrays never appear inside them. A callback rather than a slice keeps the
// walk free of allocations; it runs over every body several times.
func eachChild(n parse.Node, add func(parse.Node)) {
	addExprs := func(es []parse.Expr) {
		for _, e := range es {
			add(e)
		}
	}
	switch v := n.(type) {
	case *parse.File:
		for _, d := range v.Decls {
			add(d)
		}
	case *parse.NamespaceDecl:
		for _, d := range v.Decls {
			add(d)
		}
	case *parse.LinkageDecl:
		for _, d := range v.Decls {
			add(d)
		}
	case *parse.RecordDecl:
		for _, d := range v.Members {
			add(d)
		}
	case *parse.VarDeclGroup:
		for _, d := range v.Vars {
			add(d)
		}
	case *parse.FuncDecl:
		for _, p := range v.Params {
			add(p)
		}
		if v.Body != nil {
			add(v.Body)
		}
	case *parse.Param:
		add(exprNode(v.Default))
	case *parse.VarDecl:
		add(exprNode(v.Init))
	case *parse.BlockStmt:
		for _, s := range v.Stmts {
			add(s)
		}
	case *parse.DeclStmt:
		if v.Record != nil {
			add(v.Record)
		}
		for _, d := range v.Vars {
			add(d)
		}
	case *parse.TryStmt:
		add(v.Body)
		for _, h := range v.Handlers {
			add(h)
		}
	case *parse.CatchClause:
		if v.Param != nil {
			add(v.Param)
		}
		add(v.Body)
	case *parse.ExprStmt:
		add(exprNode(v.X))
	case *parse.IfStmt:
		add(stmtNode(v.Init))
		add(exprNode(v.Cond))
		add(stmtNode(v.Then))
		add(stmtNode(v.Else))
	case *parse.ForStmt:
		add(stmtNode(v.Init))
		add(exprNode(v.Cond))
		add(exprNode(v.Post))
		add(stmtNode(v.Body))
	case *parse.RangeForStmt:
		if v.Var != nil {
			add(v.Var)
		}
		add(exprNode(v.Range))
		add(stmtNode(v.Body))
	case *parse.WhileStmt:
		add(exprNode(v.Cond))
		add(stmtNode(v.Body))
	case *parse.DoStmt:
		add(stmtNode(v.Body))
		add(exprNode(v.Cond))
	case *parse.SwitchStmt:
		add(exprNode(v.Cond))
		add(stmtNode(v.Body))
	case *parse.CaseStmt:
		add(exprNode(v.Value))
	case *parse.LabeledStmt:
		add(stmtNode(v.Stmt))
	case *parse.ReturnStmt:
		add(exprNode(v.X))
	case *parse.DeclInStmt:
		add(v.Decl)
	case *parse.TemplateIdent:
		for _, a := range v.Args {
			if _, isType := a.(*parse.TypeRef); !isType {
				add(a)
			}
		}
	case *parse.BinaryExpr:
		add(exprNode(v.X))
		add(exprNode(v.Y))
	case *parse.UnaryExpr:
		add(exprNode(v.X))
	case *parse.CondExpr:
		add(exprNode(v.Cond))
		add(exprNode(v.Then))
		add(exprNode(v.Else))
	case *parse.ParenExpr:
		add(exprNode(v.X))
	case *parse.IndexExpr:
		add(exprNode(v.X))
		add(exprNode(v.Index))
	case *parse.MemberExpr:
		add(exprNode(v.X))
		for _, a := range v.Args { // x.f<N>(): template arguments may be expressions
			if e, ok := a.(parse.Expr); ok {
				add(e)
			}
		}
	case *parse.ParenListExpr:
		addExprs(v.Args)
	case *parse.CallExpr:
		add(exprNode(v.Fun))
		addExprs(v.Args)
	case *parse.LaunchExpr:
		add(exprNode(v.Kernel))
		addExprs(v.Config)
		addExprs(v.Args)
	case *parse.CastExpr:
		add(exprNode(v.X))
	case *parse.SizeofExpr:
		add(exprNode(v.X))
	case *parse.InitListExpr:
		addExprs(v.Elems)
	case *parse.LambdaExpr:
		for _, p := range v.Params {
			add(p)
		}
		if v.Body != nil {
			add(v.Body)
		}
	case *parse.NewExpr:
		addExprs(v.Args)
		add(exprNode(v.Count))
	case *parse.DeleteExpr:
		add(exprNode(v.X))
	}
}

// exprNode converts a possibly nil Expr to a Node that is nil when the
// expression is (avoiding typed nils in interfaces).
func exprNode(e parse.Expr) parse.Node {
	if e == nil {
		return nil
	}
	return e
}

func stmtNode(s parse.Stmt) parse.Node {
	if s == nil {
		return nil
	}
	return s
}
