// Package parse is bamgen's lossless front end for CUDA C++.
//
// Lex splits a file into tokens that, concatenated, reproduce it byte for
// byte, whatever the bytes: comments, whitespace, newlines, backslash
// continuations and preprocessor lines are trivia tokens, and so are the
// #if branches the parser does not take (Inactive). ParseFile builds a
// syntax tree over the non-trivia tokens: declarations (namespaces,
// extern "C", classes, templates, typedefs, functions with their CUDA
// specifiers and __launch_bounds__, variables), statements and expressions
// with full C++ precedence, kernel launches `k<<<g, b, s, st>>>(args)`,
// lambdas, casts and templates. Every node carries byte offsets into the
// original source, so later stages edit the bytes by range and never
// re-print the tree.
//
// The parser never fails a file and never panics on input. What it does not
// understand it keeps as Opaque, OpaqueStmt or OpaqueExpr with an exact byte
// range, resynchronising at the next ';' or the matching '}', and reports a
// diagnostic. It does not run the preprocessor: of each #if group it sees
// the first branch (the #else of an `#if 0`), and it learns from the file's
// own #defines which macros stand for specifiers (`#define HD __host__
// __device__`), attributes, restrict, pragmas or statement prefixes.
//
// C++ cannot be parsed exactly without every header, so three decisions are
// heuristics over the names this file declares (found by a prescan, so
// order does not matter) and names CUDA and the standard library make
// common:
//   - `a<b` opens template arguments when a is a known template (declared
//     in the file, std::, thrust::, cub::, cg::, ...) or when the `<...>`
//     closes and is followed by '(', '::' or '<<<';
//   - `(T)x` is a cast when T is a builtin type, a type declared in the
//     file, a name ending in _t, a pointer or cv-qualified type, or a plain
//     name that is not a variable and is followed by an operand;
//   - a statement is a declaration when it parses as specifiers, a type and
//     a declarator followed by '=', ';', ',', '(', '{' or ':'.
//
// ParseFile reads a string copy of the source, whose memory the strings in
// the tree (names, types' Text) share. File.Src keeps the bytes passed in
// (File.Text reads them), so the caller must not modify them.
//
// parse/README.md describes the files and how to add a statement,
// expression or declaration form.
//
// # Diagnostics
//
// Codes are stable; tools match on them.
//
//	PARSE001  unterminated /* comment (the comment runs to end of file)
//	PARSE002  unterminated string or character literal (it ends at the end
//	          of its line; a raw string runs to end of file)
//	PARSE003  unbalanced braces: a '{' with no matching '}' before end of
//	          file, or a stray '}' at file level
//	PARSE004  a byte that starts no token (`@`, '`', NUL, control bytes)
//	PARSE005  invalid UTF-8 outside literals and comments
//	PARSE006  unbalanced preprocessor conditional (#else/#elif/#endif
//	          without #if, or #if without #endif); a warning
//	PARSE007  nesting deeper than the parser's limit (500); the innermost
//	          construct is kept as written
//	PARSE010  a declaration the parser did not understand (kept as Opaque)
//	PARSE011  a statement the parser did not understand (kept as OpaqueStmt)
//	PARSE012  an expression the parser did not understand (kept as
//	          OpaqueExpr), or an unclosed argument or initializer list
//	PARSE013  a missing ';' after a statement that is otherwise complete;
//	          a warning
//	PARSE014  a function parameter the parser did not understand
//	PARSE099  internal parser error; the rest of the file is kept as one
//	          Opaque declaration (a bug: please report it)
//
// Harmless constructs are kept as Opaque without a diagnostic: inline
// assembly, static_assert, forward declarations, explicit instantiations,
// macro invocations at file level (`DEFINE_KERNEL(add, +)`), pragma and
// statement-prefix macros, and macro arguments that are not expressions.
package parse
