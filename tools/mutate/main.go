// Command mutate is bamgen's small mutation tester. It plants one bug at a
// time in the Go sources of the packages it is given, runs the tests with
// the bug in place, and counts the mutants the tests kill (fail on). A
// mutant that survives is either a missing test or an equivalent change;
// docs/mutation.md lists them.
//
//	go run ./tools/mutate -pkgs ./transform/... -test ./transform/...,./cmd/bamgen \
//	    -sample 80 -seed 1 -timeout 3m -out docs/mutation.md
//
// Mutations (go/ast over the non-test files of -pkgs):
//
//	cmp       flip a comparison: < to >=, <= to >, > to <=, >= to <, == to !=, != to ==
//	negate    negate the condition of an if statement
//	refusal   drop a refusal: a call whose name contains "refuse" or "Drop"
//	          (the diagnostic) together with the `ok = false` / return that follows it
//	edit      drop a statement that appends an edit (a call whose name is or ends in
//	          "edit"/"Edit", or `x.edits = append(...)`)
//
// Dropped statements are wrapped in `if false { ... }` rather than deleted,
// so that the variables they use stay used and the mutant compiles.
//
// Each mutant is built in a copy of the module (-work), so the working
// tree is never changed. A mutant that does not compile is "invalid" and
// left out of the kill rate; one that runs past -timeout counts as killed
// (the tests did not pass).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// keepMarker starts the hand-written part of the report, kept across runs.
const keepMarker = "<!-- written by hand below: kept by tools/mutate -->"

type mutant struct {
	File    string // path relative to the module root
	Line    int
	Kind    string
	Desc    string
	Start   int // byte range replaced in the file
	End     int
	New     string
	Outcome string // killed, survived, invalid, timeout
	Detail  string // first failing test, for killed mutants
}

func main() {
	pkgs := flag.String("pkgs", "./transform/...", "comma-separated package patterns to mutate")
	tests := flag.String("test", "./transform/...,./cmd/bamgen", "comma-separated package patterns whose tests run per mutant")
	sample := flag.Int("sample", 0, "run a random sample of this many mutants of each kind (0: all)")
	seed := flag.Int64("seed", 1, "random seed of the sample")
	timeout := flag.Duration("timeout", 3*time.Minute, "time limit of one mutant's test run")
	out := flag.String("out", "", "write the report (Markdown) here; stdout when empty")
	work := flag.String("work", "", "scratch copy of the module (default: a new temporary folder)")
	list := flag.Bool("list", false, "only list the mutants")
	flag.Parse()

	root, err := moduleRoot()
	check(err)
	files, err := goFiles(root, split(*pkgs))
	check(err)
	var all []*mutant
	for _, f := range files {
		ms, err := mutantsOf(root, f)
		check(err)
		all = append(all, ms...)
	}
	total := len(all)
	chosen := all
	if *sample > 0 {
		// Stratified: up to -sample of each kind, so the rare kinds
		// (refusals, edits) are not drowned by comparisons.
		r := rand.New(rand.NewSource(*seed))
		byKind := map[string][]*mutant{}
		for _, m := range all {
			byKind[m.Kind] = append(byKind[m.Kind], m)
		}
		chosen = nil
		for _, k := range []string{"cmp", "negate", "refusal", "edit"} {
			ms := byKind[k]
			idx := r.Perm(len(ms))
			if len(idx) > *sample {
				idx = idx[:*sample]
			}
			sort.Ints(idx)
			for _, i := range idx {
				chosen = append(chosen, ms[i])
			}
		}
	}
	if *list {
		for _, m := range chosen {
			fmt.Printf("%s:%d %s %s\n", m.File, m.Line, m.Kind, m.Desc)
		}
		fmt.Printf("%d of %d mutants\n", len(chosen), total)
		return
	}
	dir := *work
	if dir == "" {
		dir, err = os.MkdirTemp("", "bamgen-mutate-")
		check(err)
		defer os.RemoveAll(dir)
	}
	check(copyModule(root, dir))
	// A clean run first: the tests must pass before mutants mean anything.
	if ok, detail := runTests(dir, split(*tests), *timeout*2); ok != "survived" {
		fatalf("the tests do not pass on the unmutated tree (%s): %s", ok, detail)
	}
	start := time.Now()
	for i, m := range chosen {
		path := filepath.Join(dir, m.File)
		orig, err := os.ReadFile(path)
		check(err)
		mutated := append(append(append([]byte{}, orig[:m.Start]...), m.New...), orig[m.End:]...)
		check(os.WriteFile(path, mutated, 0o644))
		m.Outcome, m.Detail = runTests(dir, split(*tests), *timeout)
		check(os.WriteFile(path, orig, 0o644))
		fmt.Fprintf(os.Stderr, "[%d/%d %s] %s:%d %s %s: %s\n", i+1, len(chosen), time.Since(start).Round(time.Second), m.File, m.Line, m.Kind, m.Desc, m.Outcome)
	}
	report := render(chosen, total, *sample, *seed, *pkgs, *tests, *timeout, time.Since(start))
	if *out == "" {
		fmt.Print(report)
	} else {
		// Hand-written explanations of survivors below the marker survive
		// a new run.
		if old, err := os.ReadFile(*out); err == nil {
			if i := bytes.Index(old, []byte(keepMarker)); i >= 0 {
				report += "\n" + string(old[i:])
			}
		}
		check(os.WriteFile(*out, []byte(report), 0o644))
	}
	killed, valid := rate(chosen)
	fmt.Fprintf(os.Stderr, "mutate: %d of %d valid mutants killed (%.1f%%)\n", killed, valid, pct(killed, valid))
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func check(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "mutate: "+format+"\n", args...)
	os.Exit(2)
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module")
	}
	return filepath.Dir(mod), nil
}

// goFiles lists the non-test Go files of the packages, relative to root.
func goFiles(root string, patterns []string) ([]string, error) {
	args := append([]string{"list", "-f", "{{.Dir}}{{range .GoFiles}} {{.}}{{end}}"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %v", strings.Join(patterns, " "), err)
	}
	var files []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		rel, err := filepath.Rel(root, f[0])
		if err != nil {
			return nil, err
		}
		for _, name := range f[1:] {
			files = append(files, filepath.Join(rel, name))
		}
	}
	sort.Strings(files)
	return files, nil
}

var flips = map[token.Token]token.Token{
	token.LSS: token.GEQ, token.LEQ: token.GTR, token.GTR: token.LEQ, token.GEQ: token.LSS,
	token.EQL: token.NEQ, token.NEQ: token.EQL,
}

// mutantsOf finds every mutation site of one file.
func mutantsOf(root, rel string) ([]*mutant, error) {
	src, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	line := func(p token.Pos) int { return fset.Position(p).Line }
	text := func(n ast.Node) string {
		s := string(src[off(n.Pos()):off(n.End())])
		s = strings.Join(strings.Fields(s), " ")
		if len(s) > 70 {
			s = s[:67] + "..."
		}
		return s
	}
	var out []*mutant
	add := func(m *mutant) {
		m.File = rel
		out = append(out, m)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if to, ok := flips[n.Op]; ok {
				p := off(n.OpPos)
				add(&mutant{Line: line(n.OpPos), Kind: "cmp", Desc: fmt.Sprintf("`%s` -> `%s` in `%s`", n.Op, to, text(n)),
					Start: p, End: p + len(n.Op.String()), New: to.String()})
			}
		case *ast.IfStmt:
			c := n.Cond
			add(&mutant{Line: line(c.Pos()), Kind: "negate", Desc: fmt.Sprintf("`if %s` -> `if !(...)`", text(c)),
				Start: off(c.Pos()), End: off(c.End()), New: "!(" + string(src[off(c.Pos()):off(c.End())]) + ")"})
		case *ast.BlockStmt:
			stmtMutants(n.List, src, off, line, text, add)
		case *ast.CaseClause:
			stmtMutants(n.Body, src, off, line, text, add)
		case *ast.CommClause:
			stmtMutants(n.Body, src, off, line, text, add)
		}
		return true
	})
	return out, nil
}

// stmtMutants finds refusals and edits in a statement list.
func stmtMutants(list []ast.Stmt, src []byte, off func(token.Pos) int, line func(token.Pos) int, text func(ast.Node) string, add func(*mutant)) {
	for i, s := range list {
		name := calleeOf(s)
		switch {
		case strings.Contains(strings.ToLower(name), "refuse") || strings.Contains(name, "Drop"):
			// The refusal and what makes it one: `ok = false` and a return
			// right after it.
			end := s.End()
			for j := i + 1; j < len(list) && j <= i+2; j++ {
				if isOKFalse(list[j]) || isReturn(list[j]) {
					end = list[j].End()
					continue
				}
				break
			}
			add(&mutant{Line: line(s.Pos()), Kind: "refusal", Desc: fmt.Sprintf("drop `%s` (and the ok = false / return after it)", text(s)),
				Start: off(s.Pos()), End: off(end), New: disable(src[off(s.Pos()):off(end)])})
		case isEdit(s, name):
			add(&mutant{Line: line(s.Pos()), Kind: "edit", Desc: fmt.Sprintf("drop `%s`", text(s)),
				Start: off(s.Pos()), End: off(s.End()), New: disable(src[off(s.Pos()):off(s.End())])})
		}
	}
}

// disable drops statements while keeping them in the source: `if false {
// ... }` never runs, yet the variables they use stay used, so the mutant
// still compiles (a plain deletion often leaves a variable unused, which Go
// rejects). A dropped return at the end of a function still makes the
// mutant invalid (missing return).
func disable(stmts []byte) string {
	return "if false {\n" + string(stmts) + "\n}"
}

// calleeOf names the function an expression statement calls ("" if none).
func calleeOf(s ast.Stmt) string {
	es, ok := s.(*ast.ExprStmt)
	if !ok {
		return ""
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok {
		return ""
	}
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name
	case *ast.SelectorExpr:
		return fn.Sel.Name
	}
	return ""
}

func isEdit(s ast.Stmt, callee string) bool {
	lc := strings.ToLower(callee)
	if lc == "edit" || strings.HasSuffix(lc, "edit") || strings.HasPrefix(lc, "edit") && lc != "edits" {
		return true
	}
	as, ok := s.(*ast.AssignStmt)
	if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
		return false
	}
	lhs := exprName(as.Lhs[0])
	call, ok := as.Rhs[0].(*ast.CallExpr)
	if !ok {
		return false
	}
	id, ok := call.Fun.(*ast.Ident)
	return ok && id.Name == "append" && strings.Contains(strings.ToLower(lhs), "edits")
}

func exprName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

func isOKFalse(s ast.Stmt) bool {
	as, ok := s.(*ast.AssignStmt)
	if !ok || len(as.Rhs) != 1 {
		return false
	}
	id, ok := as.Rhs[0].(*ast.Ident)
	return ok && id.Name == "false"
}

func isReturn(s ast.Stmt) bool {
	_, ok := s.(*ast.ReturnStmt)
	return ok
}

// copyModule copies the module's tracked and untracked (not ignored) files.
func copyModule(root, dir string) error {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %v", err)
	}
	for _, rel := range strings.Split(string(out), "\x00") {
		if rel == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree
			}
			return err
		}
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		info, err := os.Stat(filepath.Join(root, rel))
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// runTests runs the tests in dir: "survived" when they pass, "killed"
// when a test fails, "timeout", or "invalid" when the code does not build.
func runTests(dir string, patterns []string, limit time.Duration) (string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	args := append([]string{"test", "-count=1", "-failfast"}, patterns...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	out := buf.String()
	switch {
	case ctx.Err() != nil:
		return "timeout", ""
	case err == nil:
		return "survived", ""
	case strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]"):
		return "invalid", firstLine(out, "")
	}
	return "killed", firstLine(out, "--- FAIL: ")
}

func firstLine(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, prefix) && t != "" {
			return strings.TrimPrefix(t, "--- FAIL: ")
		}
	}
	return ""
}

func rate(ms []*mutant) (killed, valid int) {
	for _, m := range ms {
		switch m.Outcome {
		case "killed", "timeout":
			killed++
			valid++
		case "survived":
			valid++
		}
	}
	return killed, valid
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func render(ms []*mutant, total, sample int, seed int64, pkgs, tests string, timeout, took time.Duration) string {
	var b strings.Builder
	killed, valid := rate(ms)
	kinds := map[string][4]int{} // killed, survived, invalid, timeout
	for _, m := range ms {
		k := kinds[m.Kind]
		switch m.Outcome {
		case "killed":
			k[0]++
		case "survived":
			k[1]++
		case "invalid":
			k[2]++
		case "timeout":
			k[3]++
		}
		kinds[m.Kind] = k
	}
	fmt.Fprintf(&b, "# Mutation testing\n\n")
	fmt.Fprintf(&b, "Generated by `tools/mutate` (`make mutate`); the explanations of survivors below the table are written by hand.\n\n")
	fmt.Fprintf(&b, "- packages mutated: `%s`; tests run per mutant: `go test -count=1 -failfast %s`\n", pkgs, strings.ReplaceAll(tests, ",", " "))
	if sample > 0 {
		fmt.Fprintf(&b, "- %d of %d mutants: a random sample of up to %d per kind (seed %d)\n", len(ms), total, sample, seed)
	} else {
		fmt.Fprintf(&b, "- all %d mutants\n", total)
	}
	fmt.Fprintf(&b, "- time limit per mutant %s; whole run %s\n\n", timeout, took.Round(time.Second))
	fmt.Fprintf(&b, "**%d of %d valid mutants killed (%.1f%%)**; mutants that do not compile are invalid and not counted.\n\n", killed, valid, pct(killed, valid))
	fmt.Fprintf(&b, "| kind | killed | survived | invalid | timeout |\n| --- | --- | --- | --- | --- |\n")
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		c := kinds[k]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", k, c[0], c[1], c[2], c[3])
	}
	fmt.Fprintf(&b, "\n## Survivors\n\n")
	n := 0
	for _, m := range ms {
		if m.Outcome == "survived" {
			fmt.Fprintf(&b, "- `%s:%d` %s: %s\n", m.File, m.Line, m.Kind, m.Desc)
			n++
		}
	}
	if n == 0 {
		fmt.Fprintf(&b, "None.\n")
	}
	return b.String()
}
