package analysis

import (
	"fmt"
	"io"
	"strings"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/parse"
)

// The JSON report of `bamgen analyze --json`; docs/analyze.md documents it.
// Field names are stable: tools depend on them.

type JSONReport struct {
	Files []JSONFile `json:"files"`
}

type JSONFile struct {
	File        string           `json:"file"`
	Functions   []JSONFunc       `json:"functions"`
	Placement   *PlacementReport `json:"placement,omitempty"` // --model with a dataset size
	Diagnostics []diag.JSON      `json:"diagnostics"`
}

type JSONFunc struct {
	Name      string       `json:"name"`
	Qualifier string       `json:"qualifier,omitempty"`
	Kind      string       `json:"kind"`
	Line      int          `json:"line"`
	Col       int          `json:"col"`
	Template  bool         `json:"template"`
	Params    []JSONParam  `json:"params"`
	Arrays    []JSONArray  `json:"arrays"`
	Launches  []JSONLaunch `json:"launches,omitempty"`
	Unparsed  int          `json:"unparsed_regions"`
	Model     *JSONModel   `json:"model,omitempty"`
}

// JSONModel is the first-principles model of a kernel (--model).
type JSONModel struct {
	Shape     string     `json:"shape"`
	Estimates []Estimate `json:"estimates"`
}

type JSONParam struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Pointer bool   `json:"pointer"`
	Const   bool   `json:"const"`
}

type JSONArray struct {
	Name          string       `json:"name"`
	Param         bool         `json:"param"`
	DataDependent bool         `json:"data_dependent"`
	Accesses      []JSONAccess `json:"accesses"`
}

type JSONAccess struct {
	Line  int      `json:"line"`
	Col   int      `json:"col"`
	Mode  Mode     `json:"mode"`
	Index string   `json:"index"` // uniform, block, affine(lane), affine(warp), affine(thread), data-dependent, nonlinear, unknown
	Loads []string `json:"loads,omitempty"`
	Expr  string   `json:"expr"`
}

// JSONLaunch is one launch site. Via, LaunchConfig and ArgsArray are
// present only on runtime API launches (cudaLaunchKernel and friends), so
// <<<>>> launches read as they always did.
type JSONLaunch struct {
	Line         int      `json:"line"`
	Col          int      `json:"col"`
	Caller       string   `json:"caller"`
	Via          string   `json:"via,omitempty"`
	Config       []string `json:"config"`
	LaunchConfig string   `json:"launch_config,omitempty"`
	Args         []string `json:"args"`
	ArgsArray    string   `json:"args_array,omitempty"`
}

// JSON converts the analysis of one file to its report form.
func (f *File) JSON(cfg *ModelConfig) JSONFile {
	src := f.Parse.Src
	out := JSONFile{File: src.Name, Functions: []JSONFunc{}, Diagnostics: []diag.JSON{}}
	for _, fn := range f.Functions {
		jf := f.jsonFunc(fn)
		if cfg != nil && fn.Kind == Kernel && fn.Decl.Body != nil {
			shape, es := Model(fn, *cfg)
			jf.Model = &JSONModel{Shape: shape, Estimates: es}
		}
		out.Functions = append(out.Functions, jf)
	}
	if cfg != nil && cfg.Placement != nil {
		r := Placements(f, *cfg, *cfg.Placement)
		out.Placement = &r
	}
	for _, d := range diag.Sorted(f.Parse.Diags) {
		out.Diagnostics = append(out.Diagnostics, src.ToJSON(d))
	}
	return out
}

func (f *File) jsonFunc(fn *Function) JSONFunc {
	src := f.Parse.Src
	line, col := src.LineCol(fn.Decl.NameSpan.Start)
	jf := JSONFunc{Name: fn.Decl.Name, Qualifier: fn.Decl.Qualifier, Kind: fn.Kind.String(), Line: line, Col: col,
		Template: fn.Decl.Template != nil, Params: []JSONParam{}, Arrays: []JSONArray{}, Unparsed: fn.Unparsed()}
	for _, p := range fn.Params {
		jf.Params = append(jf.Params, JSONParam{Name: p.Name, Type: p.Type, Pointer: p.Pointer, Const: p.Const})
	}
	for _, a := range fn.Arrays {
		jf.Arrays = append(jf.Arrays, f.jsonArray(a))
	}
	if fn.Kind == Kernel {
		for _, l := range f.LaunchesOf(fn.Decl.Name) {
			jf.Launches = append(jf.Launches, f.jsonLaunch(l))
		}
	}
	return jf
}

func (f *File) jsonArray(a *Array) JSONArray {
	ja := JSONArray{Name: a.Name, Param: a.Param, DataDependent: a.DataDependent(), Accesses: []JSONAccess{}}
	for _, acc := range a.Accesses {
		line, col := f.Parse.Src.LineCol(acc.Pos)
		ja.Accesses = append(ja.Accesses, JSONAccess{Line: line, Col: col, Mode: acc.Mode,
			Index: acc.Index.Form.String(), Loads: acc.Index.Loads, Expr: f.text(acc.Expr)})
	}
	return ja
}

func (f *File) jsonLaunch(l Launch) JSONLaunch {
	line, col := f.Parse.Src.LineCol(l.Pos())
	jl := JSONLaunch{Line: line, Col: col, Caller: l.Caller, Via: l.Via, Config: []string{}, Args: []string{},
		LaunchConfig: f.optText(l.ConfigStruct), ArgsArray: f.optText(l.ArgsArray)}
	for _, c := range l.Config {
		jl.Config = append(jl.Config, f.text(c))
	}
	for _, a := range l.Args {
		jl.Args = append(jl.Args, f.text(a))
	}
	return jl
}

// optText is text for an optional expression: "" when there is none.
func (f *File) optText(e parse.Expr) string {
	if e == nil {
		return ""
	}
	return f.text(e)
}

// text returns n's source with runs of whitespace collapsed, for reports.
func (f *File) text(n parse.Node) string {
	return strings.Join(strings.Fields(f.Parse.Text(n)), " ")
}

// WriteText prints the report for people.
func (f *File) WriteText(w io.Writer, cfg *ModelConfig) {
	src := f.Parse.Src
	fmt.Fprintf(w, "%s:\n", src.Name)
	for _, fn := range f.Functions {
		if fn.Kind != Kernel {
			continue
		}
		f.writeKernel(w, fn)
		if cfg != nil && fn.Decl.Body != nil {
			shape, es := Model(fn, *cfg)
			io.WriteString(w, FormatEstimates(*cfg, shape, es))
		}
	}
	var others []string
	for _, fn := range f.Functions {
		if fn.Kind != Kernel {
			others = append(others, fn.Kind.String()+" "+qualified(fn.Decl))
		}
	}
	if len(others) > 0 {
		fmt.Fprintf(w, "  other functions: %s\n", strings.Join(others, ", "))
	}
	if cfg != nil && cfg.Placement != nil {
		io.WriteString(w, FormatPlacements(Placements(f, *cfg, *cfg.Placement)))
	}
}

func (f *File) writeKernel(w io.Writer, fn *Function) {
	line, col := f.Parse.Src.LineCol(fn.Decl.NameSpan.Start)
	fmt.Fprintf(w, "  kernel %s  (line %d:%d)\n", qualified(fn.Decl), line, col)
	for _, p := range fn.Params {
		tag := ""
		if p.Pointer {
			tag = "  pointer"
			if p.Const {
				tag += ", const"
			}
		}
		fmt.Fprintf(w, "    param %-16s %s%s\n", p.Name, p.Type, tag)
	}
	for _, a := range fn.Arrays {
		f.writeArray(w, a)
	}
	launches := f.LaunchesOf(fn.Decl.Name)
	if len(launches) == 0 {
		fmt.Fprintf(w, "    launches: none in this file\n")
	}
	for _, l := range launches {
		line, col := f.Parse.Src.LineCol(l.Pos())
		fmt.Fprintf(w, "    launch  %d:%d in %s: %s\n", line, col, l.Caller, f.text(l.Node()))
	}
	if n := fn.Unparsed(); n > 0 {
		fmt.Fprintf(w, "    unparsed regions: %d (see diagnostics)\n", n)
	}
}

func (f *File) writeArray(w io.Writer, a *Array) {
	kind := "local"
	if a.Param {
		kind = "param"
	}
	modes := map[Mode]bool{}
	var modeList []string
	for _, acc := range a.Accesses {
		if !modes[acc.Mode] {
			modes[acc.Mode] = true
			modeList = append(modeList, string(acc.Mode))
		}
	}
	var forms []string
	for _, s := range a.Forms() {
		forms = append(forms, s.String())
	}
	fmt.Fprintf(w, "    array %-16s %s, %d accesses (%s), index: %s\n", a.Name, kind, len(a.Accesses),
		strings.Join(modeList, ", "), strings.Join(forms, "; "))
}

func qualified(fd *parse.FuncDecl) string {
	if fd.Qualifier != "" {
		return fd.Qualifier + "::" + fd.Name
	}
	return fd.Name
}
