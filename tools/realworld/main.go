// Command realworld measures bamgen on whole public CUDA projects, the way a
// new user would try it: every .cu/.cuh file is analyzed and ported with
// --auto (and --auto --opt auto), and the results are checked for the
// properties issue 17 asks for:
//
//   - analyze-clean: `bamgen analyze` reports no error diagnostic;
//   - no-op: `bamgen port FILE` with no arrays chosen is byte-identical;
//   - chosen/ported: parameters --auto chose, and how many became bam::array;
//   - idempotence: porting the output again (same flags) changes nothing;
//   - silent breakage: port exits 0 and changed the file, the original
//     compiles with nvcc, the output does not (same flags).
//
// Usage:
//
//	go run ./tools/realworld -bamgen bin/bamgen -out build/realworld DIR...
//
// Each DIR is one project (its base name is the project name). Results:
// OUT/files.csv (one row per file), OUT/summary.md (per project and total),
// OUT/refusals.csv (why chosen parameters were not ported, by code and
// message), OUT/parse_errors.csv (analyze error diagnostics), and the outputs
// and nvcc logs under OUT/work/. nvcc results are cached in OUT/cache keyed
// by the file content, the flags and the runtime headers, so a rerun with a
// new bamgen only compiles the outputs that changed.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

type config struct {
	bamgen      string
	nvcc        string
	out         string
	runtimeInc  string
	target      []string
	jobs        int
	bamTimeout  time.Duration
	nvccTimeout time.Duration
	compile     bool
	match       *regexp.Regexp
	runtimeHash string
	plainI      bool
	program     bool
}

// result is one row of files.csv.
type result struct {
	Project, File string // File is relative to the project root

	AnalyzeRC     int
	AnalyzeErrors int
	AnalyzeMS     int64
	AnalyzeFatal  string // crash, timeout or unparsable JSON

	NoopRC        int
	NoopIdentical bool

	Auto port
	Opt  port

	OrigCompiles string // "ok", "fail", "skip" (nothing to compare), "" (not run)
	OrigLog      string
}

type port struct {
	RC         int
	MS         int64
	Fatal      string
	Changed    bool
	Chosen     int
	Ported     int
	Warnings   int
	Errors     int
	Idempotent string // "yes", "no", "n/a"
	Compiles   string // "ok", "fail", "" (not compiled)
	Log        string
	Silent     bool
	Static     string // a break visible without nvcc ("no include", "include under #if", ...), "" if none
	Refusals   []refusal
	OptNotes   []diag // OPT* diagnostics (which rewrite, or why none)
	outPath    string
}

type refusal struct{ Kernel, Param, Code, Why string }

func main() {
	var cfg config
	var target, match string
	flag.StringVar(&cfg.bamgen, "bamgen", "bin/bamgen", "bamgen binary to measure")
	flag.StringVar(&cfg.nvcc, "nvcc", "nvcc", "nvcc binary")
	flag.StringVar(&cfg.out, "out", "build/realworld", "output directory")
	flag.StringVar(&cfg.runtimeInc, "runtime-include", "runtime/cuda/include", "bundled runtime headers (-I for every compile)")
	flag.StringVar(&target, "target", "-gencode arch=compute_80,code=compute_80",
		"nvcc target flags; the default runs every front end and cicc but not ptxas (2x faster); use -arch=sm_80 for SASS")
	flag.IntVar(&cfg.jobs, "j", 2, "files processed in parallel")
	flag.DurationVar(&cfg.bamTimeout, "bamgen-timeout", 30*time.Second, "limit per bamgen run")
	flag.DurationVar(&cfg.nvccTimeout, "nvcc-timeout", 300*time.Second, "limit per nvcc run")
	flag.BoolVar(&cfg.compile, "compile", true, "compile originals and outputs with nvcc (silent-breakage check)")
	flag.BoolVar(&cfg.plainI, "plain-I", false, "pass the project's header directories with -I (they may shadow system headers) instead of -Xcompiler -idirafter")
	flag.StringVar(&match, "match", "", "only files whose project/relative path matches this regexp")
	flag.BoolVar(&cfg.program, "program", false, "also port each project directory as one program (bamgen port --auto -w on a copy) and compile the changed files; results in OUT/program.md")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: realworld [flags] PROJECT_DIR...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	cfg.target = strings.Fields(target)
	if match != "" {
		re, err := regexp.Compile(match)
		if err != nil {
			fatalf("-match: %v", err)
		}
		cfg.match = re
	}
	var err error
	if cfg.bamgen, err = filepath.Abs(cfg.bamgen); err != nil {
		fatalf("%v", err)
	}
	if _, err := os.Stat(cfg.bamgen); err != nil {
		fatalf("bamgen binary: %v (build it with `go build -o bin/bamgen ./cmd/bamgen`)", err)
	}
	if cfg.runtimeInc, err = filepath.Abs(cfg.runtimeInc); err != nil {
		fatalf("%v", err)
	}
	if cfg.compile {
		if _, err := exec.LookPath(cfg.nvcc); err != nil {
			fatalf("nvcc not found (%v); pass -compile=false to skip the compile checks", err)
		}
		cfg.runtimeHash = hashTree(cfg.runtimeInc)
	}
	for _, d := range []string{"work", "cache"} {
		if err := os.MkdirAll(filepath.Join(cfg.out, d), 0o755); err != nil {
			fatalf("%v", err)
		}
	}

	type job struct {
		proj, root, rel string
		incs            []string
	}
	var jobs []job
	for _, dir := range flag.Args() {
		root, err := filepath.Abs(dir)
		if err != nil {
			fatalf("%v", err)
		}
		proj := filepath.Base(root)
		files, incs := scan(root)
		for _, rel := range files {
			if cfg.match != nil && !cfg.match.MatchString(proj+"/"+rel) {
				continue
			}
			jobs = append(jobs, job{proj, root, rel, incs})
		}
	}
	fmt.Fprintf(os.Stderr, "realworld: %d files in %d projects\n", len(jobs), flag.NArg())

	results := make([]*result, len(jobs))
	// Rows are also appended to OUT/files.partial.csv as files finish, so an
	// interrupted run keeps what it measured (nvcc results stay cached too).
	partial, err := os.Create(filepath.Join(cfg.out, "files.partial.csv"))
	if err != nil {
		fatalf("%v", err)
	}
	defer partial.Close()
	pw := csv.NewWriter(partial)
	_ = pw.Write(csvHeader)
	pw.Flush()
	var wg sync.WaitGroup
	next := make(chan int)
	var mu sync.Mutex
	done := 0
	for w := 0; w < max(cfg.jobs, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := jobs[i]
				r := runFile(&cfg, j.proj, j.root, j.rel, j.incs)
				results[i] = r
				mu.Lock()
				_ = pw.Write(csvRow(r))
				pw.Flush()
				done++
				flagStr := ""
				if r.Auto.Silent || r.Opt.Silent {
					flagStr = "  SILENT BREAKAGE"
				}
				fmt.Fprintf(os.Stderr, "[%d/%d] %s/%s analyze=%d auto=%d/%d%s\n", done, len(jobs), j.proj, j.rel,
					r.AnalyzeErrors, r.Auto.Ported, r.Auto.Chosen, flagStr)
				mu.Unlock()
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()

	if err := writeFilesCSV(filepath.Join(cfg.out, "files.csv"), results); err != nil {
		fatalf("%v", err)
	}
	if err := writeRefusals(filepath.Join(cfg.out, "refusals.csv"), results); err != nil {
		fatalf("%v", err)
	}
	if err := writeOptNotes(filepath.Join(cfg.out, "opt_notes.csv"), results); err != nil {
		fatalf("%v", err)
	}
	if err := writeParseErrors(&cfg, filepath.Join(cfg.out, "parse_errors.csv"), results); err != nil {
		fatalf("%v", err)
	}
	if cfg.program {
		var prs []programResult
		for _, dir := range flag.Args() {
			pr := runProgram(&cfg, dir)
			fmt.Fprintf(os.Stderr, "program %s: exit %d, %d files changed, %d/%d ported, %d broken\n", pr.Project, pr.RC, len(pr.Changed), pr.Ported, pr.Chosen, len(pr.Broken))
			prs = append(prs, pr)
		}
		if err := os.WriteFile(filepath.Join(cfg.out, "program.md"), []byte(programSummary(prs)), 0o644); err != nil {
			fatalf("%v", err)
		}
	}
	sum := summary(&cfg, results)
	if err := os.WriteFile(filepath.Join(cfg.out, "summary.md"), []byte(sum), 0o644); err != nil {
		fatalf("%v", err)
	}
	fmt.Print(sum)
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "realworld: error: "+format+"\n", args...)
	os.Exit(2)
}

// scan lists the .cu/.cuh files of a project and the include directories
// used to compile them: the root, every directory holding headers, and the
// parent of each (for includes written as "sub/header.h").
func scan(root string) (files, incs []string) {
	dirs := map[string]bool{root: true}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		ext := strings.ToLower(filepath.Ext(p))
		switch ext {
		case ".cu", ".cuh":
			rel, _ := filepath.Rel(root, p)
			files = append(files, rel)
		}
		switch ext {
		case ".h", ".hpp", ".hxx", ".cuh", ".inl", ".inc":
			dir := filepath.Dir(p)
			dirs[dir] = true
			if dir != root {
				dirs[filepath.Dir(dir)] = true
			}
		}
		return nil
	})
	sort.Strings(files)
	for d := range dirs {
		incs = append(incs, d)
	}
	sort.Strings(incs)
	return files, incs
}

type cmdResult struct {
	rc       int
	stdout   []byte
	stderr   []byte
	ms       int64
	timedOut bool
}

func run(timeout time.Duration, dir string, name string, args ...string) cmdResult {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	cmd.WaitDelay = 5 * time.Second
	t0 := time.Now()
	err := cmd.Run()
	r := cmdResult{stdout: so.Bytes(), stderr: se.Bytes(), ms: time.Since(t0).Milliseconds()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.rc, r.timedOut = -1, true
	case errors.As(err, &ee):
		r.rc = ee.ExitCode()
	case err != nil:
		r.rc = -2
		r.stderr = append(r.stderr, []byte(err.Error())...)
	}
	return r
}

// fatalOf reports a crash or timeout of a bamgen run ("" when it ended
// normally with exit status 0, 1 or 2 and no panic).
func fatalOf(r cmdResult) string {
	switch {
	case r.timedOut:
		return "timeout"
	case bytes.Contains(r.stderr, []byte("panic:")) || bytes.Contains(r.stderr, []byte("goroutine ")):
		return "panic"
	case r.rc < 0 || r.rc > 2:
		return "exit " + strconv.Itoa(r.rc)
	}
	return ""
}

type diag struct {
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
}

type analyzeJSON struct {
	Files []struct {
		Diagnostics []diag `json:"diagnostics"`
	} `json:"files"`
}

type portJSON struct {
	Files []struct {
		Changed bool `json:"changed"`
		Choices []struct {
			Kernel string `json:"kernel"`
			Param  string `json:"param"`
			Ported bool   `json:"ported"`
			Why    string `json:"why"`
		} `json:"choices"`
		Diagnostics []diag `json:"diagnostics"`
	} `json:"files"`
}

func runFile(cfg *config, proj, root, rel string, incs []string) *result {
	r := &result{Project: proj, File: rel}
	src := filepath.Join(root, rel)
	orig, err := os.ReadFile(src)
	if err != nil {
		r.AnalyzeFatal = err.Error()
		return r
	}
	work := filepath.Join(cfg.out, "work", proj, rel)
	if err := os.MkdirAll(filepath.Dir(work), 0o755); err != nil {
		r.AnalyzeFatal = err.Error()
		return r
	}
	// bamgen reads .bamgen.yaml next to each input; point it at an empty
	// config so a project's own file cannot change what is measured.
	emptyCfg := filepath.Join(cfg.out, "empty.bamgen.yaml")
	_ = os.WriteFile(emptyCfg, []byte("{}\n"), 0o644)

	// analyze
	a := run(cfg.bamTimeout, root, cfg.bamgen, "analyze", "--json", src)
	r.AnalyzeRC, r.AnalyzeMS, r.AnalyzeFatal = a.rc, a.ms, fatalOf(a)
	var aj analyzeJSON
	if r.AnalyzeFatal == "" {
		if err := json.Unmarshal(a.stdout, &aj); err != nil {
			r.AnalyzeFatal = "bad json"
		}
	}
	var diags []diag
	for _, f := range aj.Files {
		for _, d := range f.Diagnostics {
			if d.Severity == "error" {
				r.AnalyzeErrors++
				diags = append(diags, d)
			}
		}
	}
	if r.AnalyzeRC == 0 && r.AnalyzeErrors > 0 {
		r.AnalyzeFatal = "exit 0 with error diagnostics"
	}
	writeDiags(work+".analyze.json", diags)

	// no-op: no arrays chosen
	n := run(cfg.bamTimeout, root, cfg.bamgen, "port", "--config", emptyCfg, src)
	r.NoopRC = n.rc
	r.NoopIdentical = n.rc == 0 && bytes.Equal(n.stdout, orig)

	r.Auto = doPort(cfg, root, src, work+".auto"+filepath.Ext(rel), orig, emptyCfg, "--auto")
	r.Opt = doPort(cfg, root, src, work+".opt"+filepath.Ext(rel), orig, emptyCfg, "--auto", "--opt", "auto")

	if !cfg.compile || !(r.Auto.RC == 0 && r.Auto.Changed || r.Opt.RC == 0 && r.Opt.Changed) {
		r.OrigCompiles = "skip"
		return r
	}
	dir := filepath.Dir(src)
	ok, log := compile(cfg, src, dir, incs, orig, work+".orig.log")
	r.OrigCompiles, r.OrigLog = okStr(ok), log
	for _, p := range []*port{&r.Auto, &r.Opt} {
		// Only outputs of originals that compile can break silently; the
		// others are not compiled (half the nvcc time on a typical project).
		if !ok || p.RC != 0 || !p.Changed || p.outPath == "" {
			continue
		}
		out, err := os.ReadFile(p.outPath)
		if err != nil {
			continue
		}
		ok, log := compile(cfg, p.outPath, dir, incs, out, strings.TrimSuffix(p.outPath, filepath.Ext(p.outPath))+".log")
		p.Compiles, p.Log = okStr(ok), log
		p.Silent = r.OrigCompiles == "ok" && !ok
	}
	return r
}

func okStr(ok bool) string {
	if ok {
		return "ok"
	}
	return "fail"
}

func writeDiags(path string, d []diag) {
	if len(d) == 0 {
		_ = os.Remove(path)
		return
	}
	b, _ := json.MarshalIndent(d, "", " ")
	_ = os.WriteFile(path, b, 0o644)
}

func doPort(cfg *config, root, src, outPath string, orig []byte, emptyCfg string, flags ...string) port {
	var p port
	args := append([]string{"port", "--json", "--config", emptyCfg}, flags...)
	_ = os.Remove(outPath)
	r := run(cfg.bamTimeout, root, cfg.bamgen, append(args, "-o", outPath, src)...)
	p.RC, p.MS, p.Fatal = r.rc, r.ms, fatalOf(r)
	var pj portJSON
	if p.Fatal == "" {
		if err := json.Unmarshal(r.stdout, &pj); err != nil {
			p.Fatal = "bad json"
		}
	}
	for _, f := range pj.Files {
		p.Changed = p.Changed || f.Changed
		codeOf := map[string]string{}
		for _, d := range f.Diagnostics {
			if strings.HasPrefix(d.Code, "OPT") {
				p.OptNotes = append(p.OptNotes, d)
			}
			switch d.Severity {
			case "warning":
				p.Warnings++
			case "error":
				p.Errors++
			}
			if _, ok := codeOf[d.Message]; !ok {
				codeOf[d.Message] = d.Code
			}
		}
		for _, c := range f.Choices {
			p.Chosen++
			if c.Ported {
				p.Ported++
				continue
			}
			code := codeOf[c.Why]
			if code == "" { // the why may be one of several sentences of a message
				for msg, cd := range codeOf {
					if strings.Contains(msg, c.Why) || strings.Contains(c.Why, msg) {
						code = cd
						break
					}
				}
			}
			p.Refusals = append(p.Refusals, refusal{c.Kernel, c.Param, code, c.Why})
		}
	}
	out, err := os.ReadFile(outPath)
	switch {
	case p.RC != 0 || err != nil:
		p.Idempotent = "n/a"
		return p
	case !bytes.Equal(out, orig) != p.Changed:
		p.Fatal = strings.TrimSpace(p.Fatal + " changed-flag-disagrees-with-output")
	}
	p.outPath = outPath
	if p.Changed {
		p.Static = staticBreak(out)
	}
	// Idempotence: port the output again, in the original's directory (so
	// local headers resolve the same way), with the same flags.
	tmp := filepath.Join(filepath.Dir(src), ".realworld-idem-"+strconv.Itoa(os.Getpid())+"-"+filepath.Base(outPath))
	if err := os.WriteFile(tmp, out, 0o644); err != nil {
		// read-only project tree: fall back to the work directory
		tmp = outPath + ".idem-in" + filepath.Ext(outPath)
		_ = os.WriteFile(tmp, out, 0o644)
	}
	defer os.Remove(tmp)
	again := run(cfg.bamTimeout, root, cfg.bamgen, append([]string{"port", "--config", emptyCfg}, append(flags, tmp)...)...)
	switch {
	case again.rc != 0:
		p.Idempotent = "no"
		_ = os.WriteFile(outPath+".idem.err", again.stderr, 0o644)
	case bytes.Equal(again.stdout, out):
		p.Idempotent = "yes"
	default:
		p.Idempotent = "no"
		_ = os.WriteFile(outPath+".idem"+filepath.Ext(outPath), again.stdout, 0o644)
	}
	return p
}

var (
	bamUse      = regexp.MustCompile(`\bbam::`)
	bamInclude  = regexp.MustCompile(`^\s*#\s*include\s*[<"]bam/bam\.cuh[>"]`)
	condOpen    = regexp.MustCompile(`^\s*#\s*if`)
	condClose   = regexp.MustCompile(`^\s*#\s*endif`)
	guardIfndef = regexp.MustCompile(`^\s*#\s*(ifndef\s+\w+|if\s+!\s*defined)`)
	statsAfter  = regexp.MustCompile(`return[^;]*;\s*\n?\s*if \(bam::default_runtime\(\)\.cfg\(\)\.stats\)`)
)

// staticBreak finds breaks of a port's output that need no compiler: it
// uses bam:: but never includes <bam/bam.cuh>; the include sits inside an
// #if block (other than an include guard opened before any code); the
// statistics print follows a return. "" when none is seen.
func staticBreak(out []byte) string {
	if !bamUse.Match(out) {
		return ""
	}
	lines := strings.Split(string(out), "\n")
	depth, guard := 0, false
	for i, l := range lines {
		switch {
		case bamInclude.MatchString(l):
			if depth > 1 || depth == 1 && !guard {
				return "include under #if"
			}
			goto included
		case condOpen.MatchString(l):
			if depth == 0 && guardIfndef.MatchString(l) && i+1 < len(lines) && strings.Contains(lines[i+1], "define") {
				guard = true
			}
			depth++
		case condClose.MatchString(l):
			depth--
		}
	}
	return "no include"
included:
	if statsAfter.Match(out) {
		return "statistics after return"
	}
	return ""
}

func hashTree(dir string) string {
	h := sha256.New()
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil {
			fmt.Fprintf(h, "%s %d\n", p, len(b))
			h.Write(b)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))
}

// compile runs nvcc -c on path (content given) with the project's include
// directories, the file's original directory first, and the runtime headers.
// Results are cached by content and flags. Returns success and the first
// error line of the log.
func compile(cfg *config, path, srcDir string, incs []string, content []byte, logPath string) (bool, string) {
	args := []string{"-std=c++17", "-w"}
	args = append(args, cfg.target...)
	args = append(args, "-I"+srcDir, "-I"+cfg.runtimeInc)
	// The project's other header directories are searched after the system
	// ones (nvcc preprocesses with the host compiler), so a project header
	// named like a system one (a local unistd.h) does not shadow it for
	// the runtime headers a port adds.
	for _, d := range incs {
		if d != srcDir {
			if cfg.plainI {
				args = append(args, "-I"+d)
			} else {
				args = append(args, "-Xcompiler", "-idirafter,"+d)
			}
		}
	}
	if strings.HasSuffix(path, ".cuh") {
		args = append(args, "-x", "cu")
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", cfg.nvcc, strings.Join(args, "\x00"), cfg.runtimeHash)
	h.Write(content)
	key := hex.EncodeToString(h.Sum(nil))
	cache := filepath.Join(cfg.out, "cache", key)
	if b, err := os.ReadFile(cache); err == nil {
		ok, log, _ := strings.Cut(string(b), "\n")
		if ok == "ok" || ok == "fail" {
			if ok == "fail" {
				_ = os.WriteFile(logPath, []byte(log), 0o644)
			}
			return ok == "ok", firstError(log)
		}
	}
	obj, err := os.CreateTemp("", "realworld-*.o")
	if err != nil {
		return false, err.Error()
	}
	obj.Close()
	defer os.Remove(obj.Name())
	args = append(args, "-c", path, "-o", obj.Name())
	r := run(cfg.nvccTimeout, srcDir, cfg.nvcc, args...)
	log := string(r.stdout) + string(r.stderr)
	ok := r.rc == 0
	if r.timedOut {
		log = "nvcc timed out\n" + log
	}
	if !ok {
		_ = os.WriteFile(logPath, []byte(log), 0o644)
	} else {
		_ = os.Remove(logPath)
	}
	if !r.timedOut {
		_ = os.WriteFile(cache, []byte(okStr(ok)+"\n"+log), 0o644)
	}
	return ok, firstError(log)
}

var errLine = regexp.MustCompile(`(?m)^.*(error|fatal).*$`)

func firstError(log string) string {
	if m := errLine.FindString(log); m != "" {
		return strings.TrimSpace(m)
	}
	return ""
}

func b2s(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func writeFilesCSV(path string, rs []*result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	_ = w.Write(csvHeader)
	for _, r := range rs {
		_ = w.Write(csvRow(r))
	}
	w.Flush()
	return w.Error()
}

var csvHeader = []string{"project", "file", "analyze_rc", "analyze_errors", "analyze_ms", "analyze_fatal",
	"noop_identical",
	"auto_rc", "auto_fatal", "auto_changed", "auto_chosen", "auto_ported", "auto_warnings", "auto_idempotent",
	"opt_rc", "opt_fatal", "opt_changed", "opt_chosen", "opt_ported", "opt_idempotent",
	"orig_compiles", "auto_compiles", "opt_compiles", "silent_auto", "silent_opt",
	"orig_error", "auto_error", "opt_error", "static_auto", "static_opt"}

func csvRow(r *result) []string {
	return []string{r.Project, r.File, strconv.Itoa(r.AnalyzeRC), strconv.Itoa(r.AnalyzeErrors),
		strconv.FormatInt(r.AnalyzeMS, 10), r.AnalyzeFatal, b2s(r.NoopIdentical),
		strconv.Itoa(r.Auto.RC), r.Auto.Fatal, b2s(r.Auto.Changed), strconv.Itoa(r.Auto.Chosen),
		strconv.Itoa(r.Auto.Ported), strconv.Itoa(r.Auto.Warnings), r.Auto.Idempotent,
		strconv.Itoa(r.Opt.RC), r.Opt.Fatal, b2s(r.Opt.Changed), strconv.Itoa(r.Opt.Chosen),
		strconv.Itoa(r.Opt.Ported), r.Opt.Idempotent,
		r.OrigCompiles, r.Auto.Compiles, r.Opt.Compiles, b2s(r.Auto.Silent), b2s(r.Opt.Silent),
		r.OrigLog, r.Auto.Log, r.Opt.Log, r.Auto.Static, r.Opt.Static}
}

func writeRefusals(path string, rs []*result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	_ = w.Write([]string{"project", "file", "kernel", "param", "code", "why"})
	for _, r := range rs {
		for _, x := range r.Auto.Refusals {
			_ = w.Write([]string{r.Project, r.File, x.Kernel, x.Param, x.Code, x.Why})
		}
	}
	w.Flush()
	return w.Error()
}

// writeOptNotes lists what --opt auto said about each kernel (the rewrite
// it chose and applied, or why none): item 4 of issue 17 is measured on it.
func writeOptNotes(path string, rs []*result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	_ = w.Write([]string{"project", "file", "line", "severity", "code", "message"})
	for _, r := range rs {
		for _, d := range r.Opt.OptNotes {
			_ = w.Write([]string{r.Project, r.File, strconv.Itoa(d.Line), d.Severity, d.Code, d.Message})
		}
	}
	w.Flush()
	return w.Error()
}

func writeParseErrors(cfg *config, path string, rs []*result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	_ = w.Write([]string{"project", "file", "line", "col", "code", "message"})
	for _, r := range rs {
		b, err := os.ReadFile(filepath.Join(cfg.out, "work", r.Project, r.File) + ".analyze.json")
		if err != nil {
			continue
		}
		var ds []diag
		if json.Unmarshal(b, &ds) != nil {
			continue
		}
		for _, d := range ds {
			_ = w.Write([]string{r.Project, r.File, strconv.Itoa(d.Line), strconv.Itoa(d.Col), d.Code, d.Message})
		}
	}
	w.Flush()
	return w.Error()
}

type tally struct {
	files, analyzeClean, fatal, noop, chosen, ported                int
	autoChanged, optChanged, idemAuto, idemAutoN, idemOpt, idemOptN int
	compared, origOK, silentAuto, silentOpt, silentFiles, autoExit2 int
	staticFiles                                                     int
	worstMS                                                         int64
}

func (t *tally) add(r *result) {
	t.files++
	if r.AnalyzeErrors == 0 && r.AnalyzeFatal == "" && r.AnalyzeRC == 0 {
		t.analyzeClean++
	}
	if r.AnalyzeFatal != "" || r.Auto.Fatal != "" || r.Opt.Fatal != "" {
		t.fatal++
	}
	if r.NoopIdentical {
		t.noop++
	}
	t.chosen += r.Auto.Chosen
	t.ported += r.Auto.Ported
	if r.Auto.RC == 2 {
		t.autoExit2++
	}
	if r.Auto.Changed {
		t.autoChanged++
	}
	if r.Opt.Changed {
		t.optChanged++
	}
	if r.Auto.Idempotent != "n/a" {
		t.idemAutoN++
		if r.Auto.Idempotent == "yes" {
			t.idemAuto++
		}
	}
	if r.Opt.Idempotent != "n/a" {
		t.idemOptN++
		if r.Opt.Idempotent == "yes" {
			t.idemOpt++
		}
	}
	if r.OrigCompiles == "ok" || r.OrigCompiles == "fail" {
		t.compared++
		if r.OrigCompiles == "ok" {
			t.origOK++
		}
	}
	if r.Auto.Silent {
		t.silentAuto++
	}
	if r.Opt.Silent {
		t.silentOpt++
	}
	if r.Auto.Silent || r.Opt.Silent {
		t.silentFiles++
	}
	if r.Auto.RC == 0 && r.Auto.Static != "" || r.Opt.RC == 0 && r.Opt.Static != "" {
		t.staticFiles++
	}
	for _, ms := range []int64{r.AnalyzeMS, r.Auto.MS, r.Opt.MS} {
		t.worstMS = max(t.worstMS, ms)
	}
}

func pct(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

func summary(cfg *config, rs []*result) string {
	var b strings.Builder
	projects := map[string]*tally{}
	var names []string
	total := &tally{}
	for _, r := range rs {
		t := projects[r.Project]
		if t == nil {
			t = &tally{}
			projects[r.Project] = t
			names = append(names, r.Project)
		}
		t.add(r)
		total.add(r)
	}
	sort.Strings(names)
	fmt.Fprintf(&b, "# realworld: %s\n\n", filepath.Base(cfg.bamgen))
	fmt.Fprintf(&b, "nvcc target: `%s` (compile only, -std=c++17; a file is compared only when a port exit 0 changed it)\n\n", strings.Join(cfg.target, " "))
	b.WriteString("| project | files | analyze clean | no-op identical | chosen | ported | ported/chosen | changed (auto/opt) | idempotent auto | idempotent opt | orig compiles | silent auto | silent opt | static break | crash/timeout | worst ms |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	row := func(name string, t *tally) {
		fmt.Fprintf(&b, "| %s | %d | %d (%s) | %d/%d | %d | %d | %s | %d/%d | %d/%d | %d/%d | %d/%d | %d | %d | %d | %d | %d |\n",
			name, t.files, t.analyzeClean, pct(t.analyzeClean, t.files), t.noop, t.files, t.chosen, t.ported,
			pct(t.ported, t.chosen), t.autoChanged, t.optChanged, t.idemAuto, t.idemAutoN, t.idemOpt, t.idemOptN,
			t.origOK, t.compared, t.silentAuto, t.silentOpt, t.staticFiles, t.fatal, t.worstMS)
	}
	for _, n := range names {
		row(n, projects[n])
	}
	row("**total**", total)
	fmt.Fprintf(&b, "\nSilent breakage: %d files (port exit 0, output changed, original compiles, output does not).\n", total.silentFiles)
	fmt.Fprintf(&b, "Static breaks (port exit 0; output uses bam:: without an unconditional #include <bam/bam.cuh>, or prints statistics after a return; no compiler needed): %d files.\n", total.staticFiles)
	first := true
	for _, r := range rs {
		for _, x := range []struct {
			mode string
			p    *port
		}{{"auto", &r.Auto}, {"opt", &r.Opt}} {
			if x.p.RC != 0 || x.p.Static == "" {
				continue
			}
			if first {
				b.WriteString("\n## Static breaks\n\n| file | mode | break | original compiles |\n| --- | --- | --- | --- |\n")
				first = false
			}
			fmt.Fprintf(&b, "| %s/%s | %s | %s | %s |\n", r.Project, r.File, x.mode, x.p.Static, r.OrigCompiles)
		}
	}

	// Silent breakages, one line each.
	first = true
	for _, r := range rs {
		for _, x := range []struct {
			mode string
			p    *port
		}{{"auto", &r.Auto}, {"opt", &r.Opt}} {
			if !x.p.Silent {
				continue
			}
			if first {
				b.WriteString("\n## Silent breakages\n\n| file | mode | warnings | first nvcc error |\n| --- | --- | ---: | --- |\n")
				first = false
			}
			fmt.Fprintf(&b, "| %s/%s | %s | %d | %s |\n", r.Project, r.File, x.mode, x.p.Warnings, mdEscape(x.p.Log))
		}
	}

	// What --opt auto did per kernel.
	opt := map[string]int{}
	for _, r := range rs {
		for _, d := range r.Opt.OptNotes {
			switch m := d.Message; {
			case strings.Contains(m, "no variable holds the thread id"):
				opt["no thread id (ported as written)"]++
			case strings.Contains(m, ": odt applied"):
				opt["odt applied"]++
			case strings.Contains(m, ": claware applied"):
				opt["claware applied"]++
			case strings.Contains(m, ": transpose applied"), strings.Contains(m, "falling back to transpose"):
				opt["transpose applied or fallen back to"]++
			case strings.Contains(m, "no access-pattern rewrite applies"):
				opt["chosen rewrite refused (ported as written)"]++
			}
		}
	}
	if len(opt) > 0 {
		b.WriteString("\n## --opt auto per kernel\n\n| outcome | kernels |\n| --- | ---: |\n")
		var ks []string
		for k := range opt {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			fmt.Fprintf(&b, "| %s | %d |\n", k, opt[k])
		}
	}

	// Refusals by code.
	codes := map[string]int{}
	for _, r := range rs {
		for _, x := range r.Auto.Refusals {
			codes[x.Code]++
		}
	}
	if len(codes) > 0 {
		b.WriteString("\n## Refusals of --auto choices by code\n\n| code | count |\n| --- | ---: |\n")
		var cs []string
		for c := range codes {
			cs = append(cs, c)
		}
		sort.Slice(cs, func(i, j int) bool {
			return codes[cs[i]] > codes[cs[j]] || codes[cs[i]] == codes[cs[j]] && cs[i] < cs[j]
		})
		for _, c := range cs {
			name := c
			if name == "" {
				name = "(no code)"
			}
			fmt.Fprintf(&b, "| %s | %d |\n", name, codes[c])
		}
	}
	return b.String()
}

func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
