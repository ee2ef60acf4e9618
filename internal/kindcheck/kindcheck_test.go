package kindcheck

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// kinds are bamgen's kind types; every switch over one must be exhaustive.
var kinds = map[string]bool{
	"github.com/bamgen/bamgen/analysis.FuncKind":          true,
	"github.com/bamgen/bamgen/transform/opt.Kind":         true,
	"github.com/bamgen/bamgen/transform/port.RewriteKind": true,
	"github.com/bamgen/bamgen/transform/port.hostOpKind":  true,
}

// TestModuleSwitchesAreExhaustive type-checks the module and checks every
// switch over a kind type. It also checks that each kind still exists and
// has a String method, so a rename cannot silently switch the check off.
func TestModuleSwitchesAreExhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the whole module")
	}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo, Dir: "../.."}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	switches := 0
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.PkgPath, e)
		}
		for name := range kinds {
			if obj, ok := p.Types.Scope().Lookup(name[strings.LastIndex(name, ".")+1:]).(*types.TypeName); ok && p.PkgPath+"."+obj.Name() == name {
				found[name] = true
				checkKindType(t, name, obj.Type().(*types.Named))
			}
		}
		for _, pr := range Check(p.Fset, p.Syntax, p.TypesInfo, kinds) {
			t.Error(pr)
		}
		switches += countSwitches(p.Syntax, p.TypesInfo)
	}
	for name := range kinds {
		if !found[name] {
			t.Errorf("kind type %s not found; update the list in this test", name)
		}
	}
	if switches == 0 {
		t.Error("no switch over a kind type found: the check sees nothing")
	}
}

func checkKindType(t *testing.T, name string, named *types.Named) {
	if len(Constants(named)) < 2 {
		t.Errorf("%s has %d constants", name, len(Constants(named)))
	}
	if obj, _, _ := types.LookupFieldOrMethod(named, false, named.Obj().Pkg(), "String"); obj == nil {
		t.Errorf("%s has no String method", name)
	}
}

func countSwitches(files []*ast.File, info *types.Info) int {
	n := 0
	for _, f := range files {
		ast.Inspect(f, func(x ast.Node) bool {
			if sw, ok := x.(*ast.SwitchStmt); ok && sw.Tag != nil {
				if named, ok := info.TypeOf(sw.Tag).(*types.Named); ok && kinds[qualified(named)] {
					n++
				}
			}
			return true
		})
	}
	return n
}

const sample = `package p

type K int

const (
	A K = iota
	B
	C
)

func (k K) String() string { return "" }

func missing(k K) {
	switch k {
	case A, B:
	}
}

func full(k K) {
	switch k {
	case A:
	case B, C:
	}
}

func defaultPanics(k K) {
	switch k {
	case A:
	default:
		panic("unhandled")
	}
}

func defaultQuiet(k K) {
	switch (k) {
	case (C):
	default:
	}
}

func other(n int) {
	switch n {
	case 1:
	}
}
`

// TestCheck runs the checker on a sample package: it must flag exactly
// the switch that forgets C and the one whose default does not panic.
func TestCheck(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", sample, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	if _, err := (&types.Config{Importer: importer.Default()}).Check("p", fset, []*ast.File{f}, info); err != nil {
		t.Fatal(err)
	}
	probs := Check(fset, []*ast.File{f}, info, map[string]bool{"p.K": true})
	var got []string
	for _, p := range probs {
		got = append(got, p.String())
	}
	want := []string{
		"p.go:14:2: switch on p.K lacks C and has no default that panics",
		"p.go:35:2: switch on p.K lacks A, B and has no default that panics",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
