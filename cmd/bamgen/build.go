package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/bamgen/bamgen/analysis"
	"github.com/bamgen/bamgen/diag"
	"github.com/bamgen/bamgen/edit"
	"github.com/bamgen/bamgen/parse"
	"github.com/bamgen/bamgen/transform/port"
)

// buildFlags are the flags of `bamgen port` (and, for --format and -j, of
// `bamgen analyze`) that serve builds and tools: report formats, a
// depfile and #line directives for build systems, and parallelism.
type buildFlags struct {
	format         string // text | json | sarif
	depfile        string
	lineDirectives bool
	jobs           int
}

func (b *buildFlags) registerReports(cmd *cobra.Command) {
	cmd.Flags().StringVar(&b.format, "format", "text", "diagnostics as `FORMAT`: text (stderr), json (stdout, like --json) or sarif (SARIF 2.1.0 on stdout; codes link to docs/diagnostics.md)")
	cmd.Flags().IntVarP(&b.jobs, "jobs", "j", 0, "files processed in parallel (0: one per CPU)")
}

func (b *buildFlags) registerPort(cmd *cobra.Command) {
	b.registerReports(cmd)
	cmd.Flags().StringVar(&b.depfile, "depfile", "", "with -o: write a Makefile-style depfile to `FILE` listing what the port read (the input, the config, the bamgen binary) for build systems (CMake's DEPFILE, make's include)")
	cmd.Flags().BoolVar(&b.lineDirectives, "line-directives", false, "with -o or stdout: add #line directives so compiler messages name the original file and lines")
}

// setupPort validates the build flags of `bamgen port` against the others
// and maps --format json to --json.
func (b *buildFlags) setupPort(f *portFlags, nfiles int) error {
	if err := b.setupReports(); err != nil {
		return err
	}
	if b.format == "json" || b.format == "sarif" {
		if f.asJSON && b.format == "sarif" {
			return errors.New("--json and --format sarif cannot be combined; --json is --format json")
		}
		if f.diff {
			return fmt.Errorf("--format %s and -d both print to stdout and cannot be combined", b.format)
		}
		f.asJSON = true // machine-readable report on stdout, results only through -o or -w
	}
	switch {
	case b.depfile != "" && (f.output == "" || nfiles != 1):
		return errors.New("--depfile needs -o FILE and one input: the depfile names FILE as what the port made")
	case b.lineDirectives && (f.write || f.diff || f.check):
		return errors.New("--line-directives applies to the ported copy (-o FILE or stdout), not to -w, -d or --check")
	}
	return nil
}

func (b *buildFlags) setupReports() error {
	switch b.format {
	case "text", "json", "sarif":
	default:
		return fmt.Errorf("--format %q: use text, json or sarif", b.format)
	}
	if b.jobs < 0 {
		return fmt.Errorf("-j %d: give a positive number of parallel files, or 0 for one per CPU", b.jobs)
	}
	return nil
}

// finishPort runs after the port and before its results are written: it
// adds #line directives to each result (from the line map the edits
// give, replacing those the port wrote), and for --depfile writes the
// depfile and removes the old output, so that the output is written anew
// and its time stamp says it is newer than every input (writeFileAtomic
// skips unchanged content, which would leave a build system re-running
// the port forever).
func (b *buildFlags) finishPort(results []portedFile, f *portFlags) error {
	if b.lineDirectives {
		for _, r := range results {
			if !diag.HasErrors(r.res.Diags) {
				name := r.src.Name
				if abs, err := filepath.Abs(name); err == nil {
					name = abs
				}
				r.res.Output = edit.Directives(r.res.Output, r.res.Lines, name)
			}
		}
	}
	if b.depfile == "" {
		return nil
	}
	r := results[0]
	deps := []string{r.src.Name}
	// The local headers the analysis read for macros: a change there can
	// change the port.
	deps = append(deps, analysis.LocalHeaders(r.src.Name, r.src.Bytes, analysis.IncludeDirs)...)
	// The other files of the program (--context, the headers found through
	// them): a launch or an allocation there decides what this file gets.
	for _, o := range results[1:] {
		deps = append(deps, o.src.Name)
	}
	deps = uniq(deps)
	cfg := f.config
	if cfg == "" {
		if p := filepath.Join(filepath.Dir(r.src.Name), port.ConfigFileName); exists(p) {
			cfg = p
		}
	}
	if cfg != "" {
		deps = append(deps, cfg)
	}
	if exe, err := os.Executable(); err == nil {
		deps = append(deps, exe)
	}
	if err := writeFileAtomic(b.depfile, depfileText(f.output, deps)); err != nil {
		return err
	}
	if err := os.Remove(f.output); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: cannot replace: %v", f.output, err)
	}
	return nil
}

// depfileText renders "target: dep dep ..." as make and Ninja read it.
func depfileText(target string, deps []string) []byte {
	var b strings.Builder
	b.WriteString(depEscape(target))
	b.WriteString(":")
	for _, d := range deps {
		b.WriteString(" \\\n  ")
		b.WriteString(depEscape(d))
	}
	b.WriteString("\n")
	return []byte(b.String())
}

// depEscape escapes a path for a Makefile rule: spaces and '#' with a
// backslash, '$' doubled.
func depEscape(p string) string {
	return strings.NewReplacer(" ", `\ `, "#", `\#`, "$", "$$").Replace(p)
}

// each runs fn(0..n-1) on -j workers (GOMAXPROCS when 0). With more than one
// file and stderr a terminal, a progress line ("bamgen: ported 3/40 files")
// is kept up to date there and erased at the end.
func (b *buildFlags) each(cmd *cobra.Command, n int, verb string, fn func(i int)) {
	workers := b.jobs
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var progress io.Writer
	if n > 1 && isTerminal(cmd.ErrOrStderr()) {
		progress = cmd.ErrOrStderr()
	}
	runEach(n, workers, verb, progress, fn)
}

func runEach(n, workers int, verb string, progress io.Writer, fn func(i int)) {
	workers = max(1, min(workers, n))
	var mu sync.Mutex
	done := 0
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
				if progress != nil {
					mu.Lock()
					done++
					fmt.Fprintf(progress, "\rbamgen: %s %d/%d files", verb, done, n)
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if progress != nil {
		fmt.Fprint(progress, "\r\033[K") // erase the line before diagnostics are printed
	}
}

// isTerminal reports whether w is a character device (a terminal) and the
// terminal is not "dumb".
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// writeReportSARIF prints files' diagnostics as a SARIF 2.1.0 log.
func writeReportSARIF(w io.Writer, files []diag.SARIFFile) error {
	version := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
	}
	root, _ := os.Getwd()
	return diag.WriteSARIF(w, diag.SARIFTool{Name: "bamgen", Version: version,
		InformationURI: "https://github.com/bamgen/bamgen"}, root, files)
}

// writePortReport prints the machine-readable report of `bamgen port`:
// JSON (docs/json.md) or SARIF.
func writePortReport(w io.Writer, results []portedFile, f *portFlags) error {
	if f.build.format != "sarif" {
		return writePortJSON(w, results)
	}
	files := make([]diag.SARIFFile, len(results))
	for i, r := range results {
		files[i] = diag.SARIFFile{Src: r.src, Diags: visible(r.res.Diags, f.quiet)}
	}
	return writeReportSARIF(w, files)
}

// runAnalyzeSARIF is `bamgen analyze --format sarif`: the parser's
// diagnostics of each file as SARIF on stdout (the report itself is what
// --json prints). The exit status is analyze's: 1 when a file has an
// error-severity diagnostic.
func runAnalyzeSARIF(cmd *cobra.Command, paths []string, b *buildFlags) error {
	sources, err := readSources(paths)
	if err != nil {
		return err
	}
	files := make([]diag.SARIFFile, len(sources))
	b.each(cmd, len(sources), "analyzed", func(i int) {
		pf := parse.ParseFile(sources[i].Name, sources[i].Bytes)
		files[i] = diag.SARIFFile{Src: pf.Src, Diags: pf.Diags}
	})
	if err := writeReportSARIF(cmd.OutOrStdout(), files); err != nil {
		return err
	}
	for _, f := range files {
		if diag.HasErrors(f.Diags) {
			return exitError{exitFindings}
		}
	}
	return nil
}
