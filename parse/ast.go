package parse

// This file defines the syntax tree. Every node carries byte offsets into the
// original source (Pos inclusive, End exclusive), so later stages can edit
// the original bytes by range and never re-print the tree. Nodes hold only
// what the analyses and rewrites need; anything the parser does not model is
// kept as an Opaque node whose range is exact.

import "github.com/bamgen/bamgen/diag"

// Node is any syntax tree node.
type Node interface {
	Pos() int // offset of the first byte
	End() int // offset just past the last byte
}

// Span is the byte range every node embeds.
type Span struct{ Start, Stop int }

func (s Span) Pos() int { return s.Start }
func (s Span) End() int { return s.Stop }

// File is one parsed translation unit.
type File struct {
	Src    *diag.Source
	Tokens []Token // every token, trivia included; concatenated they equal Src.Bytes
	Decls  []Decl  // top-level declarations in source order
	Macros []*Macro
	Diags  []diag.Diagnostic
}

// Text returns the source bytes of n as a string.
func (f *File) Text(n Node) string { return string(f.Src.Bytes[n.Pos():n.End()]) }

// ---------------------------------------------------------------------------
// Types

// TypeRef is a type as written at a declaration: `const float *__restrict__`,
// `unsigned long long`, `std::vector<int> &`, `T`. Span covers exactly the
// type's tokens (not the declared name).
type TypeRef struct {
	Span
	Text     string // the type's tokens joined by single spaces ("const float *")
	Base     string // the base type without cv, pointers, refs, restrict ("float", "unsigned int", "std::vector<int>")
	BaseSpan Span   // range of the base type's tokens
	Const    bool   // the pointee/base is const (`const T *` or `T const *`)
	Pointers int    // number of `*` levels
	Ref      bool   // lvalue reference `&`
	RRef     bool   // rvalue reference `&&`
	Restrict bool   // `__restrict__` or `__restrict` appears
	Array    []Span // array dimensions `[N]` following the declarator name, if any
}

// IsPointer reports whether the type is a (single or multi level) pointer.
func (t *TypeRef) IsPointer() bool { return t != nil && t.Pointers > 0 }

// ---------------------------------------------------------------------------
// Declarations

// Decl is a top-level or member declaration.
type Decl interface {
	Node
	declNode()
}

// FuncDecl is a function definition or prototype.
type FuncDecl struct {
	Span
	Name         string // unqualified name; for `A::f` Qualifier is "A"
	NameSpan     Span
	Qualifier    string   // `ns::Class` for out-of-line member definitions, else ""
	Template     *Span    // range of `template <...>` if any
	Specifiers   []string // CUDA and C++ specifiers in order: "__global__", "__device__", "__host__", "__forceinline__", "static", "inline", "extern", "constexpr", ...
	LaunchBounds *Span    // `__launch_bounds__(...)` if present
	Result       *TypeRef // return type (nil for constructors/destructors)
	Params       []*Param
	ParamsSpan   Span       // from `(` to `)` inclusive
	Body         *BlockStmt // nil for a prototype
	Scope        *Scope     // parameters and every local declared in the body
}

// IsKernel reports whether the function is a `__global__` kernel.
func (f *FuncDecl) IsKernel() bool { return f.has("__global__") }

// IsDevice reports whether the function can run on the device
// (`__device__`, `__global__`).
func (f *FuncDecl) IsDevice() bool { return f.has("__device__") || f.has("__global__") }

// IsHost reports whether the function runs on the host: explicitly
// `__host__`, or no CUDA execution-space specifier at all.
func (f *FuncDecl) IsHost() bool { return f.has("__host__") || !f.IsDevice() }

func (f *FuncDecl) has(spec string) bool {
	for _, s := range f.Specifiers {
		if s == spec {
			return true
		}
	}
	return false
}

// Param is one function parameter.
type Param struct {
	Span
	Type     *TypeRef
	Name     string // "" for unnamed parameters
	NameSpan Span
	Default  Expr // nil when absent
}

// VarDecl declares one variable (a declaration statement or a global may
// declare several; each gets its own VarDecl sharing the same Type text).
type VarDecl struct {
	Span                // its type (first declarator) or own `*`/`&` (later ones) through the initializer
	Specifiers []string // "__shared__", "__constant__", "__device__", "static", "extern", "constexpr", ...
	Type       *TypeRef // full type of this declarator (pointer levels included)
	Name       string
	NameSpan   Span
	Init       Expr // `= x` (an Expr or *InitListExpr), `{x}` (*InitListExpr) or `(x, y)` (*ParenListExpr); nil when absent
}

// VarDeclGroup is a top-level variable declaration (`__constant__ int c[4], d;`).
type VarDeclGroup struct {
	Span
	Vars []*VarDecl
}

// NamespaceDecl is `namespace N { ... }` (Name "" for anonymous).
type NamespaceDecl struct {
	Span
	Name  string
	Decls []Decl
}

// LinkageDecl is `extern "C" { ... }` or `extern "C" decl`.
type LinkageDecl struct {
	Span
	Lang  string
	Decls []Decl
}

// RecordDecl is a struct, class or union definition.
type RecordDecl struct {
	Span
	Kind     string // "struct", "class", "union"
	Name     string
	Template *Span
	Members  []Decl // member functions (FuncDecl), fields (VarDeclGroup), nested types, Opaque
}

// TypedefDecl is `typedef T name;` or `using name = T;`.
type TypedefDecl struct {
	Span
	Name string
	Type *TypeRef
}

// EnumDecl is an enum or enum class definition.
type EnumDecl struct {
	Span
	Name string
}

// UsingDecl is `using namespace x;` or `using x::y;`.
type UsingDecl struct {
	Span
}

// Opaque is a range the parser kept without understanding it. Reason says
// why (also reported as a diagnostic unless the range is harmless, e.g. a
// static_assert or a stray semicolon).
type Opaque struct {
	Span
	Reason string
}

func (*FuncDecl) declNode()      {}
func (*VarDeclGroup) declNode()  {}
func (*NamespaceDecl) declNode() {}
func (*LinkageDecl) declNode()   {}
func (*RecordDecl) declNode()    {}
func (*TypedefDecl) declNode()   {}
func (*EnumDecl) declNode()      {}
func (*UsingDecl) declNode()     {}
func (*Opaque) declNode()        {}

// Macro is an object-like or function-like `#define`.
type Macro struct {
	Span          // the whole directive line(s)
	Name   string //
	Params []string
	IsFunc bool   // function-like macro
	Body   string // replacement text, continuations joined
}

// ---------------------------------------------------------------------------
// Scopes and symbols

// Symbol is a parameter or local variable of a function.
type Symbol struct {
	Name  string
	Type  *TypeRef
	Decl  Node // *Param or *VarDecl
	Param bool
}

// Scope maps names to symbols for one function (parameters and all locals;
// a later declaration of the same name shadows for lookups after it).
type Scope struct {
	Symbols []*Symbol
}

// Lookup returns the last symbol named name declared before offset pos, or nil.
func (s *Scope) Lookup(name string, pos int) *Symbol {
	if s == nil {
		return nil
	}
	// The last match is the first from the end.
	for i := len(s.Symbols) - 1; i >= 0; i-- {
		if sym := s.Symbols[i]; sym.Name == name && sym.Decl.Pos() <= pos {
			return sym
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// Statements

// Stmt is a statement.
type Stmt interface {
	Node
	stmtNode()
}

type (
	BlockStmt struct {
		Span
		Stmts []Stmt
	}
	DeclStmt struct {
		Span
		Record Decl // the struct/class/union/enum defined by `struct S { } s;`, else nil
		Vars   []*VarDecl
	}
	ExprStmt struct {
		Span
		X Expr
	}
	IfStmt struct {
		Span
		Init Stmt // C++17 `if (init; cond)`; nil when absent
		Cond Expr
		Then Stmt
		Else Stmt // nil when absent
	}
	ForStmt struct {
		Span
		Init Stmt // DeclStmt, ExprStmt or nil
		Cond Expr // nil when absent
		Post Expr // nil when absent
		Body Stmt
	}
	RangeForStmt struct {
		Span
		Var   *VarDecl
		Range Expr
		Body  Stmt
	}
	WhileStmt struct {
		Span
		Cond Expr
		Body Stmt
	}
	DoStmt struct {
		Span
		Body Stmt
		Cond Expr
	}
	SwitchStmt struct {
		Span
		Cond Expr
		Body Stmt
	}
	CaseStmt struct {
		Span
		Value Expr // nil for `default:`
	}
	LabeledStmt struct {
		Span
		Label string
		Stmt  Stmt
	}
	BranchStmt struct {
		Span
		Keyword string // "break", "continue", "goto"
		Label   string
	}
	ReturnStmt struct {
		Span
		X Expr // nil for a bare return
	}
	EmptyStmt struct {
		Span
	}
	// DeclInStmt is a local type, typedef or static_assert inside a body.
	DeclInStmt struct {
		Span
		Decl Decl
	}
	// OpaqueStmt is a statement the parser could not understand; a
	// diagnostic names it. Its range ends at the statement's `;` or `}`.
	OpaqueStmt struct {
		Span
		Reason string
	}
)

// TryStmt is `try { } catch (...) { }` (host code).
type TryStmt struct {
	Span
	Body     *BlockStmt
	Handlers []*CatchClause
}

// CatchClause is one `catch (T e) { }`; Param is nil for `catch (...)`.
type CatchClause struct {
	Span
	Param *Param
	Body  *BlockStmt
}

func (*TryStmt) stmtNode()      {}
func (*BlockStmt) stmtNode()    {}
func (*DeclStmt) stmtNode()     {}
func (*ExprStmt) stmtNode()     {}
func (*IfStmt) stmtNode()       {}
func (*ForStmt) stmtNode()      {}
func (*RangeForStmt) stmtNode() {}
func (*WhileStmt) stmtNode()    {}
func (*DoStmt) stmtNode()       {}
func (*SwitchStmt) stmtNode()   {}
func (*CaseStmt) stmtNode()     {}
func (*LabeledStmt) stmtNode()  {}
func (*BranchStmt) stmtNode()   {}
func (*ReturnStmt) stmtNode()   {}
func (*EmptyStmt) stmtNode()    {}
func (*DeclInStmt) stmtNode()   {}
func (*OpaqueStmt) stmtNode()   {}

// ---------------------------------------------------------------------------
// Expressions

// Expr is an expression.
type Expr interface {
	Node
	exprNode()
}

type (
	// Ident is a possibly qualified name: `x`, `std::max`, `::foo`, `threadIdx`.
	Ident struct {
		Span
		Name string // as written without whitespace ("std::max")
	}
	// TemplateIdent is a name with template arguments: `foo<T, 8>`, `static_cast` excluded.
	TemplateIdent struct {
		Span
		Name     string
		Args     []Node // each argument: a *TypeRef or an Expr
		ArgsSpan Span   // from `<` to `>` inclusive
	}
	// BasicLit is a number, character or string literal (adjacent string
	// literals are one BasicLit).
	BasicLit struct {
		Span
		Kind  TokenKind // Number, Char or String
		Value string
	}
	// BinaryExpr covers arithmetic, logical, comparison, comma and all
	// assignments (`=`, `+=`, ...); use IsAssign to tell.
	BinaryExpr struct {
		Span
		Op    string
		OpPos int
		X, Y  Expr
	}
	// UnaryExpr is a prefix (`-x`, `!x`, `~x`, `*p`, `&x`, `++i`) or postfix
	// (`i++`) operator.
	UnaryExpr struct {
		Span
		Op      string
		Postfix bool
		X       Expr
	}
	CondExpr struct {
		Span
		Cond, Then, Else Expr
	}
	ParenExpr struct {
		Span
		X Expr
	}
	IndexExpr struct {
		Span
		X      Expr
		Index  Expr
		Lbrack int
		Rbrack int
	}
	// MemberExpr is `x.name` or `x->name` (threadIdx.x is a MemberExpr of Ident "threadIdx").
	MemberExpr struct {
		Span
		X     Expr
		Arrow bool
		Name  string
		Args  []Node // template arguments of `x.f<T>` / `x.template f<T>`, if any
	}
	CallExpr struct {
		Span
		Fun    Expr // Ident, TemplateIdent, MemberExpr, ...
		Args   []Expr
		Lparen int
		Rparen int
	}
	// LaunchExpr is `kernel<<<grid, block, shmem, stream>>>(args)`.
	LaunchExpr struct {
		Span
		Kernel Expr   // Ident or TemplateIdent
		Config []Expr // 2 to 4 expressions between <<< and >>>
		Args   []Expr
		Lparen int
		Rparen int
	}
	// CastExpr is a C-style cast `(T)x`, a functional cast `T(x)`, or a named
	// cast `static_cast<T>(x)` (Kind "c", "functional", "static_cast", ...).
	CastExpr struct {
		Span
		Kind string
		Type *TypeRef
		X    Expr
	}
	// SizeofExpr is `sizeof(T)`, `sizeof x`, `alignof(T)` or `sizeof...(P)`.
	SizeofExpr struct {
		Span
		Keyword string
		Type    *TypeRef // nil when the operand is an expression
		X       Expr
	}
	// InitListExpr is a braced initializer `{a, b}` (optionally typed: `T{a}`).
	InitListExpr struct {
		Span
		Type  *TypeRef
		Elems []Expr
	}
	// LambdaExpr is `[captures](params) mutable -> R { body }`.
	LambdaExpr struct {
		Span
		Captures Span
		Params   []*Param
		Body     *BlockStmt
		Scope    *Scope // the lambda's parameters and locals
	}
	// NewExpr is `new T(...)`, `new T[n]`; DeleteExpr is `delete p`/`delete[] p`.
	NewExpr struct {
		Span
		Type  *TypeRef
		Args  []Expr
		Count Expr
	}
	DeleteExpr struct {
		Span
		Array bool
		X     Expr
	}
	// ParenListExpr is a parenthesised initializer: `dim3 grid(n, 1)`,
	// `std::vector<float> h(n)`, `Foo f()` at block scope.
	ParenListExpr struct {
		Span
		Args   []Expr
		Lparen int
		Rparen int
	}
	// OpaqueExpr is an expression the parser could not understand.
	OpaqueExpr struct {
		Span
		Reason string
	}
)

func (*Ident) exprNode()         {}
func (*TemplateIdent) exprNode() {}
func (*BasicLit) exprNode()      {}
func (*BinaryExpr) exprNode()    {}
func (*UnaryExpr) exprNode()     {}
func (*CondExpr) exprNode()      {}
func (*ParenExpr) exprNode()     {}
func (*IndexExpr) exprNode()     {}
func (*MemberExpr) exprNode()    {}
func (*CallExpr) exprNode()      {}
func (*LaunchExpr) exprNode()    {}
func (*CastExpr) exprNode()      {}
func (*SizeofExpr) exprNode()    {}
func (*InitListExpr) exprNode()  {}
func (*LambdaExpr) exprNode()    {}
func (*NewExpr) exprNode()       {}
func (*DeleteExpr) exprNode()    {}
func (*OpaqueExpr) exprNode()    {}
func (*ParenListExpr) exprNode() {}

// IsAssign reports whether op is `=` or a compound assignment.
func IsAssign(op string) bool {
	switch op {
	case "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=":
		return true
	}
	return false
}
