package parse

import (
	"reflect"
	"strconv"
	"strings"
)

// Dump renders n as a compact S-expression for tests and debugging:
// `(func __global__ k "void" ((param "float *" a)) (block (= (index a i) 0)))`.
// Types print as their quoted Text; nil optional children print as `_`.
func Dump(n Node) string {
	var b strings.Builder
	dump(&b, n)
	return b.String()
}

func dump(b *strings.Builder, n Node) {
	if isNilNode(n) {
		b.WriteString("_")
		return
	}
	if dumpDecl(b, n) || dumpStmt(b, n) || dumpExpr(b, n) {
		return
	}
	// A node with no case above (a new form) prints as its type's name.
	b.WriteString("(" + reflect.TypeOf(n).Elem().Name() + ")")
}

// list writes "(head items...)"; each item is a Node, a string written as
// is, or a []Node-like slice expanded by the caller.
func list(b *strings.Builder, head string, items ...any) {
	b.WriteByte('(')
	b.WriteString(head)
	for _, it := range items {
		switch it := it.(type) {
		case string:
			if it == "" {
				continue
			}
			b.WriteByte(' ')
			b.WriteString(it)
		case Node:
			b.WriteByte(' ')
			dump(b, it)
		case nil:
			b.WriteString(" _")
		}
	}
	b.WriteByte(')')
}

func nodes[T Node](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func typeStr(t *TypeRef) string {
	if t == nil {
		return "_"
	}
	return strconv.Quote(t.Text)
}

func dumpDecl(b *strings.Builder, n Node) bool {
	switch n := n.(type) {
	case *File:
		list(b, "file", nodes(n.Decls)...)
	case *FuncDecl:
		dumpFunc(b, n)
	case *Param:
		items := []any{typeStr(n.Type), n.Name}
		if n.Default != nil {
			items = append(items, "=", n.Default)
		}
		list(b, "param", items...)
	case *VarDeclGroup:
		list(b, "vars", nodes(n.Vars)...)
	case *VarDecl:
		items := []any{strings.Join(n.Specifiers, " "), n.Name, typeStr(n.Type)}
		if n.Init != nil {
			items = append(items, n.Init)
		}
		list(b, "var", items...)
	case *NamespaceDecl:
		list(b, "namespace", append([]any{n.Name}, nodes(n.Decls)...)...)
	case *LinkageDecl:
		list(b, "extern", append([]any{strconv.Quote(n.Lang)}, nodes(n.Decls)...)...)
	case *RecordDecl:
		head := n.Kind
		if n.Template != nil {
			head = "template " + head
		}
		list(b, head, append([]any{n.Name}, nodes(n.Members)...)...)
	case *TypedefDecl:
		list(b, "typedef", n.Name, typeStr(n.Type))
	case *EnumDecl:
		list(b, "enum", n.Name)
	case *UsingDecl:
		list(b, "using")
	case *Opaque:
		list(b, "opaque", strconv.Quote(n.Reason))
	case *TypeRef:
		b.WriteString(typeStr(n))
	default:
		return false
	}
	return true
}

func dumpFunc(b *strings.Builder, n *FuncDecl) {
	var items []any
	if n.Template != nil {
		items = append(items, "template")
	}
	items = append(items, strings.Join(n.Specifiers, " "))
	if n.LaunchBounds != nil {
		items = append(items, "launch_bounds")
	}
	name := n.Name
	if n.Qualifier != "" {
		name = n.Qualifier + "::" + name
	}
	var ps strings.Builder
	list(&ps, "params", nodes(n.Params)...)
	items = append(items, name, typeStr(n.Result), ps.String())
	if n.Body != nil {
		items = append(items, n.Body)
	} else {
		items = append(items, "proto")
	}
	list(b, "func", items...)
}

func dumpStmt(b *strings.Builder, n Node) bool {
	switch n := n.(type) {
	case *BlockStmt:
		list(b, "block", nodes(n.Stmts)...)
	case *DeclStmt:
		items := nodes(n.Vars)
		if n.Record != nil {
			items = append([]any{n.Record}, items...)
		}
		list(b, "decl", items...)
	case *ExprStmt:
		dump(b, n.X)
	case *IfStmt:
		dumpIf(b, n)
	case *ForStmt:
		list(b, "for", n.Init, n.Cond, n.Post, n.Body)
	case *RangeForStmt:
		list(b, "range-for", n.Var, n.Range, n.Body)
	case *WhileStmt:
		list(b, "while", n.Cond, n.Body)
	case *DoStmt:
		list(b, "do", n.Body, n.Cond)
	case *SwitchStmt:
		list(b, "switch", n.Cond, n.Body)
	case *CaseStmt:
		if n.Value == nil {
			b.WriteString("(default)")
		} else {
			list(b, "case", n.Value)
		}
	case *LabeledStmt:
		list(b, "label", n.Label, n.Stmt)
	case *BranchStmt:
		list(b, n.Keyword, n.Label)
	case *ReturnStmt:
		if n.X == nil {
			b.WriteString("(return)")
		} else {
			list(b, "return", n.X)
		}
	case *EmptyStmt:
		b.WriteString("(empty)")
	case *DeclInStmt:
		dump(b, n.Decl)
	case *OpaqueStmt:
		list(b, "opaque-stmt", strconv.Quote(n.Reason))
	case *TryStmt:
		list(b, "try", append([]any{n.Body}, nodes(n.Handlers)...)...)
	case *CatchClause:
		list(b, "catch", n.Param, n.Body)
	default:
		return false
	}
	return true
}

func dumpIf(b *strings.Builder, n *IfStmt) {
	items := []any{}
	if n.Init != nil {
		items = append(items, n.Init)
	}
	items = append(items, n.Cond, n.Then)
	if n.Else != nil {
		items = append(items, n.Else)
	}
	list(b, "if", items...)
}

func dumpExpr(b *strings.Builder, n Node) bool {
	switch n := n.(type) {
	case *Ident:
		b.WriteString(n.Name)
	case *TemplateIdent:
		list(b, "tmpl", append([]any{n.Name}, nodes(n.Args)...)...)
	case *BasicLit:
		b.WriteString(n.Value)
	case *BinaryExpr:
		list(b, n.Op, n.X, n.Y)
	case *UnaryExpr:
		op := n.Op
		if n.Postfix {
			op = "post" + op
		}
		list(b, op, n.X)
	case *CondExpr:
		list(b, "?", n.Cond, n.Then, n.Else)
	case *ParenExpr:
		list(b, "paren", n.X)
	case *IndexExpr:
		list(b, "index", n.X, n.Index)
	case *MemberExpr:
		op := "."
		if n.Arrow {
			op = "->"
		}
		list(b, op, append([]any{n.X, n.Name}, nodes(n.Args)...)...)
	case *CallExpr:
		list(b, "call", append([]any{n.Fun}, nodes(n.Args)...)...)
	case *LaunchExpr:
		var cfg strings.Builder
		list(&cfg, "config", nodes(n.Config)...)
		list(b, "launch", append([]any{n.Kernel, cfg.String()}, nodes(n.Args)...)...)
	default:
		return dumpExpr2(b, n)
	}
	return true
}

func dumpExpr2(b *strings.Builder, n Node) bool {
	switch n := n.(type) {
	case *CastExpr:
		list(b, "cast-"+n.Kind, typeStr(n.Type), n.X)
	case *SizeofExpr:
		if n.Type != nil {
			list(b, n.Keyword, typeStr(n.Type))
		} else {
			list(b, n.Keyword, n.X)
		}
	case *InitListExpr:
		items := []any{}
		if n.Type != nil {
			items = append(items, typeStr(n.Type))
		}
		list(b, "init", append(items, nodes(n.Elems)...)...)
	case *LambdaExpr:
		var ps strings.Builder
		list(&ps, "params", nodes(n.Params)...)
		list(b, "lambda", ps.String(), n.Body)
	case *NewExpr:
		items := []any{typeStr(n.Type)}
		if n.Count != nil {
			items = append(items, "count", n.Count)
		}
		list(b, "new", append(items, nodes(n.Args)...)...)
	case *DeleteExpr:
		op := "delete"
		if n.Array {
			op = "delete[]"
		}
		list(b, op, n.X)
	case *ParenListExpr:
		list(b, "args", nodes(n.Args)...)
	case *OpaqueExpr:
		list(b, "opaque-expr", strconv.Quote(n.Reason))
	default:
		return false
	}
	return true
}
