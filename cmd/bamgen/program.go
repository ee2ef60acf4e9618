package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/transform"
)

// programFlags are the flags of `bamgen port` that say what the program
// is: include paths, defines, a compilation database, the project root and
// context files (docs/port.md, "Whole programs").
type programFlags struct {
	includes        []string
	defines         []string
	compileCommands string
	root            string
	context         []string
	headerDir       string
	resolvedRoot    string // the root load settled on (absolute)
}

func (p *programFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVarP(&p.includes, "include", "I", nil, "search `DIR` for #include \"...\" headers (repeatable)")
	fl.StringArrayVarP(&p.defines, "define", "D", nil, "`NAME[=VALUE]` is defined for every file, as for the compiler (repeatable)")
	fl.StringVarP(&p.compileCommands, "compile-commands", "p", "", "port the files of this compilation database (`FILE` compile_commands.json, or the build directory holding it) with their -I and -D")
	fl.StringVar(&p.root, "root", "", "project root `DIR`: local headers under it may be rewritten, others are only read (default: the common directory of the inputs)")
	fl.StringVar(&p.headerDir, "header-dir", "", "with -o: write the local headers the port changes to `DIR`, at their path relative to the root (a build that ports into its own tree; see docs/cmake.md)")
	fl.StringArrayVar(&p.context, "context", nil, "also read `FILE` as part of the program (its launches and allocations count) without writing or printing it (repeatable; for builds that port file by file)")
}

// program is what `bamgen port` ports: the units and, per unit, whether
// its result is emitted. Inputs come first (inputs of them), then the
// --context files, then the headers found through them.
type program struct {
	units  []transform.Unit
	emit   []bool
	inputs int
	// given counts the inputs as named (a file named twice twice, a
	// directory once, each database entry): what -o and --depfile check.
	given int
	root  string // the project root (absolute)
}

func (p *programFlags) load(args []string) (*program, error) {
	var ccs []compileCommand
	if p.compileCommands != "" {
		var err error
		if ccs, err = readCompileCommands(p.compileCommands); err != nil {
			return nil, err
		}
	}
	paths := append([]string(nil), args...)
	perFile := map[string]compileCommand{}
	for _, cc := range ccs {
		paths = append(paths, cc.file)
		perFile[cc.file] = cc
	}
	inputs, err := expandInputs(paths)
	if err != nil {
		return nil, err
	}
	var dirs, system []string
	for _, d := range p.includes {
		dirs = append(dirs, absPath(d))
	}
	for _, cc := range ccs {
		dirs = append(dirs, cc.include...)
		system = append(system, cc.system...)
	}
	dirs = uniq(append(dirs, system...))
	analysis.IncludeDirs = dirs
	sources, err := readSources(inputs)
	if err != nil {
		return nil, err
	}
	ctx, err := readSources(p.context)
	if err != nil {
		return nil, err
	}
	// The default root holds the inputs, the -I directories named on the
	// command line and the directories of the database's entries (its
	// own -I may point anywhere, e.g. at the CUDA toolkit).
	root := p.root
	if root == "" {
		spots := append(append([]string(nil), inputs...), p.context...)
		for _, d := range p.includes {
			spots = append(spots, filepath.Join(d, "x"))
		}
		for _, cc := range ccs {
			spots = append(spots, filepath.Join(cc.directory, "x"))
		}
		root = commonDir(spots)
	}
	root = absPath(root)
	for _, d := range p.defines {
		if name, _, _ := strings.Cut(d, "="); !isIdent(name) {
			return nil, fmt.Errorf("-D %q: want NAME or NAME=VALUE", d)
		}
	}
	prog := &program{inputs: len(sources), given: len(args) + len(ccs), root: root}
	seen := map[string]bool{}
	add := func(name string, src []byte, u transform.Unit, emit bool) {
		u.Name, u.Src = name, src
		prog.units = append(prog.units, u)
		prog.emit = append(prog.emit, emit)
		seen[absPath(name)] = true
	}
	for _, s := range sources {
		defs := append([]string(nil), p.defines...)
		defs = append(defs, perFile[absPath(s.Name)].defines...)
		add(s.Name, s.Bytes, transform.Unit{Input: true, Defines: defs, ReadOnly: !within(absPath(s.Name), root)}, within(absPath(s.Name), root))
	}
	for _, s := range ctx {
		if !seen[absPath(s.Name)] {
			add(s.Name, s.Bytes, transform.Unit{Input: true, Defines: p.defines}, false)
		}
	}
	// The local headers of every file, transitively: read; written when
	// under the root and not in a system directory.
	for i := 0; i < len(prog.units) && len(prog.units) < 4096; i++ {
		u := prog.units[i]
		for _, h := range analysis.IncludedHeaders(u.Name, u.Src, dirs) {
			abs := absPath(h)
			if seen[abs] {
				continue
			}
			seen[abs] = true
			b, err := readSource(h)
			if err != nil {
				continue // the compiler will say; bamgen reads what it can
			}
			ro := !within(abs, root)
			for _, d := range system {
				ro = ro || within(abs, d)
			}
			prog.units = append(prog.units, transform.Unit{Name: h, Src: b, ReadOnly: ro})
			prog.emit = append(prog.emit, !ro)
		}
	}
	return prog, nil
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func uniq(list []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// headersReadOnly makes the headers found through the inputs read-only:
// stdout and -o hold only the inputs, so a kernel whose prototype or
// helper in such a header would have to change is left unported (PORT040)
// rather than ported in the input alone.
func (p *program) headersReadOnly() {
	for i := range p.units {
		if !p.units[i].Input {
			p.units[i].ReadOnly = true
			p.emit[i] = false
		}
	}
}
