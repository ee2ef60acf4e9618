package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/transform"
	"github.com/bamgen/bamgen/transform/port"
	"github.com/bamgen/bamgen/udiff"
)

func init() { subcommands = append(subcommands, newPortCmd) }

// portFlags are the flags of `bamgen port`.
type portFlags struct {
	arrays []string
	auto   bool
	ref    bool
	single bool
	config string
	counts []string
	output string
	write  bool
	diff   bool
	check  bool
	asJSON bool
	quiet  bool
	opt    optFlags
	build  buildFlags // --format, --depfile, --line-directives, -j (build.go)
	prog   programFlags
}

func newPortCmd() *cobra.Command {
	var f portFlags
	cmd := &cobra.Command{
		Use:   "port [flags] FILE|DIR...",
		Short: "Rewrite chosen arrays of CUDA kernels to bam::array",
		Long: `port rewrites the chosen pointer parameters of CUDA kernels to bam::array
(storage behind a GPU software cache), the element accesses and helpers
that need it, and the host code that allocates, fills, launches with and
frees those buffers. Arrays are chosen with --array, --auto, or the
.bamgen.yaml next to the file (or --config). Uses bamgen cannot rewrite
safely are reported with a PORT0xx code and the array is left as it was.

Like gofmt: the result goes to stdout, or to -o FILE, or back into the file
with -w; -d prints a unified diff; --check exits 1 when a port is pending.
Diagnostics go to stderr ("file:line:col: severity: message [CODE]"), or
with --json to stdout (docs/json.md). Exit 2 on errors; nothing is written
then. See docs/port.md.

Several files, a directory (every .cu, .cuh, .h and .hpp under it) or a
compilation database (-p) are ported as one program: a kernel, its
prototypes (also in local headers), its launches and the buffers passed
to it change together in every file, or in none. Local headers found on
the include path (-I) under the project root (--root, default the common
directory of the inputs) are read and rewritten when they must change;
other headers are only read. -w writes every changed file or none.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && f.prog.compileCommands == "" {
				return errors.New("requires at least 1 arg(s), only received 0 (give files, a directory, or -p compile_commands.json)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPort(cmd, args, &f)
		},
	}
	fl := cmd.Flags()
	f.opt.register(cmd)
	f.build.registerPort(cmd)
	fl.StringArrayVar(&f.arrays, "array", nil, "port pointer parameter `NAME` of every kernel, or KERNEL:NAME (repeatable)")
	fl.BoolVar(&f.auto, "auto", false, "choose arrays indexed data-dependently or allocated with input-sized buffers")
	fl.BoolVar(&f.single, "single-version", false, "compile each ported kernel once, through bam::array only (by default its body is compiled twice: plain loads when every array is in GPU or zero-copy host memory)")
	fl.BoolVar(&f.ref, "ref", false, "read read-only arrays through bam::array_ref in loops where each thread scans them (off by default, also with --opt auto)")
	fl.StringVar(&f.config, "config", "", "read choices from this `FILE` instead of .bamgen.yaml next to each input")
	fl.StringArrayVar(&f.counts, "count", nil, "element count of an array as `NAME=EXPR` (host expression; repeatable)")
	fl.StringVarP(&f.output, "output", "o", "", "write the result to `FILE` (one input only)")
	fl.BoolVarP(&f.write, "write", "w", false, "write the result back to each input file (only when it changed)")
	fl.BoolVarP(&f.diff, "diff", "d", false, "print a unified diff instead of the result")
	fl.BoolVar(&f.check, "check", false, "exit 1 when a port is pending (changes nothing; combine with -d to see it)")
	fl.BoolVar(&f.asJSON, "json", false, "print diagnostics and choices as JSON on stdout (docs/json.md)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "do not print notes (what was ported and why)")
	f.prog.register(cmd)
	return cmd
}

// portedFile is the outcome for one file of the program, kept in input
// order: the inputs first, then the local headers found through them.
type portedFile struct {
	src *diag.Source
	res *transform.Result
	err error
	// emit says whether the result is written (-w), printed or diffed: an
	// input or a local header under the root; not a --context file nor
	// a read-only header.
	emit bool
	// input is a file named on the command line (or by -p).
	input bool
}

func runPort(cmd *cobra.Command, paths []string, f *portFlags) error {
	prog, err := f.prog.load(paths)
	if err != nil {
		return err
	}
	if err := f.build.setupPort(f, prog.given); err != nil {
		return err
	}
	opts, err := f.options(prog.given)
	if err != nil {
		return err
	}
	switch {
	case f.prog.headerDir != "" && f.output == "":
		return errors.New("--header-dir goes with -o: it says where the headers of a port into another tree go; -w and -d handle headers themselves")
	case f.prog.headerDir != "":
		// -o FILE plus the headers under --header-dir
	case !f.write && !f.diff && !f.check:
		prog.headersReadOnly() // stdout and -o hold the inputs only
	}
	f.prog.resolvedRoot = prog.root
	var results []portedFile
	if len(prog.units) == 1 && len(prog.units[0].Defines) == 0 {
		u := prog.units[0]
		res, err := transform.Run(u.Name, u.Src, opts)
		if err != nil {
			return err
		}
		results = []portedFile{{src: diag.NewSource(u.Name, u.Src), res: res, emit: true, input: true}}
	} else {
		pr, err := transform.RunProgram(prog.units, opts, func(n int, fn func(int)) { f.build.each(cmd, n, "ported", fn) })
		if err != nil {
			return err
		}
		for i, r := range pr.Files {
			results = append(results, portedFile{src: r.Src, res: r, emit: prog.emit[i], input: i < prog.inputs})
		}
		if err := checkProgramOutput(results, pr, f); err != nil {
			return err
		}
	}
	if err := f.build.finishPort(results, f); err != nil {
		return err
	}
	return emitPort(cmd, results, f)
}

// checkProgramOutput refuses stdout for a program of several files (it
// holds one). Files ported alone (no file links them to another) keep
// printing one after another, as before. (-o takes one input, and the
// headers found through it are read-only then, so nothing else changes.)
func checkProgramOutput(results []portedFile, pr *transform.ProgramResult, f *portFlags) error {
	if f.write || f.diff || f.check || f.asJSON && f.output == "" {
		return nil
	}
	var others []string
	for _, r := range results {
		if r.emit && !r.input && r.res.Changed {
			others = append(others, r.src.Name)
		}
	}
	if f.output != "" {
		return nil // one input; the headers were read-only (headersReadOnly)
	}
	for _, g := range pr.Groups {
		n := 0
		for _, i := range g {
			if results[i].emit {
				n++
			}
		}
		if n > 1 || len(others) > 0 {
			names := []string{}
			for _, i := range g {
				names = append(names, results[i].src.Name)
			}
			return fmt.Errorf("%s form one program (a kernel of one is declared or launched in another), and stdout holds one file: use -w to write every changed file, or -d for one diff of them all", strings.Join(names, ", "))
		}
	}
	return nil
}

// options validates flag combinations and builds the pipeline's options:
// every flag is parsed here, once.
func (f *portFlags) options(nfiles int) (transform.Options, error) {
	var o transform.Options
	rewrites, err := f.opt.parse()
	if err != nil {
		return o, err
	}
	switch {
	case f.output != "" && nfiles != 1:
		return o, fmt.Errorf("-o takes exactly one input file, got %d; to port several files as one program use -w (in place) or -d (one diff), or give the others with --context", nfiles)
	case f.output != "" && f.write:
		return o, errors.New("-o and -w cannot be combined: -o writes elsewhere, -w writes in place")
	case f.diff && (f.write || f.output != ""):
		return o, errors.New("-d prints a diff and cannot be combined with -w or -o")
	case f.check && (f.write || f.output != ""):
		return o, errors.New("--check changes nothing and cannot be combined with -w or -o")
	case f.asJSON && f.diff:
		return o, errors.New("--json and -d both print to stdout and cannot be combined")
	}
	for _, a := range f.arrays {
		if err := checkArraySpec(a); err != nil {
			return o, err
		}
	}
	counts, err := parseCounts(f.counts)
	if err != nil {
		return o, err
	}
	o = transform.Options{Port: port.Options{Arrays: f.arrays, Auto: f.auto, Counts: counts, Ref: f.ref, SingleVersion: f.single},
		Opt: rewrites, FindConfig: f.config == ""}
	if f.config != "" {
		cfg, err := port.LoadConfig(f.config)
		if err != nil {
			return o, fmt.Errorf("--config: %w", err)
		}
		o.Port.Config = cfg
	}
	return o, nil
}

// checkArraySpec validates NAME or KERNEL:NAME.
func checkArraySpec(s string) error {
	parts := strings.Split(s, ":")
	if len(parts) > 2 {
		return fmt.Errorf("--array %q: want NAME or KERNEL:NAME", s)
	}
	for _, p := range parts {
		if !isIdent(p) {
			return fmt.Errorf("--array %q: %q is not an identifier; want NAME or KERNEL:NAME", s, p)
		}
	}
	return nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// parseCounts parses NAME=EXPR pairs.
func parseCounts(list []string) (map[string]string, error) {
	out := map[string]string{}
	for _, c := range list {
		name, expr, ok := strings.Cut(c, "=")
		name, expr = strings.TrimSpace(name), strings.TrimSpace(expr)
		if !ok || expr == "" {
			return nil, fmt.Errorf("--count %q: want NAME=EXPR, e.g. --count edges=num_edges", c)
		}
		if err := checkArraySpec(name); err != nil {
			return nil, fmt.Errorf("--count %q: %q is not NAME or KERNEL:NAME", c, name)
		}
		out[name] = expr
	}
	return out, nil
}

// emitPort prints diagnostics and writes results according to the mode.
func emitPort(cmd *cobra.Command, results []portedFile, f *portFlags) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	hasErrors, pending := false, false
	for _, r := range results {
		hasErrors = hasErrors || diag.HasErrors(r.res.Diags)
		pending = pending || r.emit && r.res.Changed
	}
	if f.asJSON {
		if err := writePortReport(stdout, results, f); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			r.src.Print(stderr, visible(r.res.Diags, f.quiet))
		}
	}
	if hasErrors {
		return exitError{exitUsage} // never partial output
	}
	if err := writeResults(stdout, results, f); err != nil {
		return err
	}
	if f.check && pending {
		return exitError{exitFindings}
	}
	return nil
}

func visible(ds []diag.Diagnostic, quiet bool) []diag.Diagnostic {
	if quiet {
		return diag.WithoutNotes(ds)
	}
	return ds
}

// writeResults puts each result where the flags say. -w writes every
// changed file or none (writeFilesAtomic).
func writeResults(stdout io.Writer, results []portedFile, f *portFlags) error {
	var toWrite []fileWrite
	for _, r := range results {
		if !r.emit {
			continue
		}
		out := r.res.Output
		switch {
		case f.diff:
			stdout.Write(udiff.Unified(r.src.Name+".orig", r.src.Name, r.src.Bytes, out))
		case f.check:
			if r.res.Changed && !f.asJSON {
				fmt.Fprintln(stdout, r.src.Name)
			}
		case f.write:
			if r.res.Changed {
				toWrite = append(toWrite, fileWrite{r.src.Name, out})
			}
		case f.output != "":
			if r.input {
				if err := writeFileAtomic(f.output, out); err != nil {
					return err
				}
			} else if f.prog.headerDir != "" && r.res.Changed {
				rel, err := filepath.Rel(f.prog.resolvedRoot, absPath(r.src.Name))
				if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
					return fmt.Errorf("%s: outside the root %s; cannot place it under --header-dir", r.src.Name, f.prog.resolvedRoot)
				}
				dst := filepath.Join(f.prog.headerDir, rel)
				if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
					return fmt.Errorf("%s: cannot write: %v", dst, err)
				}
				if err := writeFileAtomic(dst, out); err != nil {
					return err
				}
			}
		case !f.asJSON:
			stdout.Write(out)
		}
	}
	return writeFilesAtomic(toWrite)
}

// fileWrite is one file -w replaces.
type fileWrite struct {
	path string
	data []byte
}

// writeFilesAtomic replaces every file or none: each new content goes to
// a temporary file in the same directory first (synced, with the old
// file's mode); only when all are written are they renamed over the
// originals. A failure before the renames removes the temporary files and
// leaves every original as it was. (A rename itself failing after others
// succeeded, which needs the directory to change under bamgen, is
// reported with the files already replaced.)
func writeFilesAtomic(files []fileWrite) error {
	if len(files) == 1 {
		return writeFileAtomic(files[0].path, files[0].data)
	}
	var tmps []string
	cleanup := func() {
		for _, t := range tmps {
			os.Remove(t)
		}
	}
	for _, fw := range files {
		tmp, err := writeTemp(fw.path, fw.data)
		if err != nil {
			cleanup()
			return fmt.Errorf("%v; no file was changed", err)
		}
		tmps = append(tmps, tmp)
	}
	for i, fw := range files {
		if err := os.Rename(tmps[i], fw.path); err != nil {
			var done []string
			for _, d := range files[:i] {
				done = append(done, d.path)
			}
			cleanup()
			return fmt.Errorf("%s: cannot replace: %v (already replaced: %s)", fw.path, err, strings.Join(done, ", "))
		}
	}
	return nil
}

// createTemp is os.CreateTemp; tests replace it to make one write fail
// (a read-only directory does not stop root).
var createTemp = os.CreateTemp

// writeTemp writes data to a new temporary file next to path, with
// path's mode bits, synced; it returns the temporary file's name.
func writeTemp(path string, data []byte) (string, error) {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return "", fmt.Errorf("%s: not a regular file; refusing to replace it", path)
		}
		mode = st.Mode().Perm()
	}
	tmp, err := createTemp(filepath.Dir(path), "."+filepath.Base(path)+".bamgen-*")
	if err != nil {
		return "", fmt.Errorf("%s: cannot write: %v", path, err)
	}
	fail := func(what string, err error) (string, error) {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", fmt.Errorf("%s: %s: %v", path, what, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail("cannot write", err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fail("cannot set mode", err)
	}
	if err := tmp.Sync(); err != nil {
		return fail("cannot sync", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("%s: cannot write: %v", path, err)
	}
	return tmp.Name(), nil
}

// writeFileAtomic replaces path with data: a temporary file in the same
// directory (so rename is atomic), the old file's mode bits, fsync, rename.
// A crash leaves either the old or the new file, never a mix. Unchanged
// content is not rewritten (keeps mtimes for build tools).
func writeFileAtomic(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file; refusing to replace it", path)
		}
		mode = st.Mode().Perm()
		if old, err := os.ReadFile(path); err == nil && string(old) == string(data) {
			return nil
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".bamgen-*")
	if err != nil {
		return fmt.Errorf("%s: cannot write: %v", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: cannot write: %v", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: cannot set mode: %v", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: cannot sync: %v", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: cannot write: %v", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("%s: cannot replace: %v", path, err)
	}
	return nil
}

// portJSON is the --json document (docs/json.md).
type portJSON struct {
	Files []portFileJSON `json:"files"`
}

type portFileJSON struct {
	File        string        `json:"file"`
	Changed     bool          `json:"changed"`
	Choices     []port.Choice `json:"choices"`
	Diagnostics []diag.JSON   `json:"diagnostics"`
}

func writePortJSON(w io.Writer, results []portedFile) error {
	doc := portJSON{Files: []portFileJSON{}}
	for _, r := range results {
		if !r.input && !(r.emit && r.res.Changed) && len(r.res.Diags) == 0 {
			continue // a header or --context file with nothing to say
		}
		fj := portFileJSON{File: r.src.Name, Changed: r.res.Changed, Choices: r.res.Choices, Diagnostics: []diag.JSON{}}
		if fj.Choices == nil {
			fj.Choices = []port.Choice{}
		}
		for _, d := range diag.Sorted(r.res.Diags) {
			fj.Diagnostics = append(fj.Diagnostics, r.src.ToJSON(d))
		}
		doc.Files = append(doc.Files, fj)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
