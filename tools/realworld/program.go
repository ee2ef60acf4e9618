package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Program mode (-program): each project directory is also ported as one
// program, the way `bamgen port --auto -w DIR` does it (docs/port.md,
// "Whole programs"): a copy of the project under OUT/work/PROJ.program is
// ported in place with the project's header directories as -I, and every
// .cu file it changed is compiled with nvcc (the original too, to tell a
// break from a file that never compiled here). Results: OUT/program.md.

// programResult is one project's whole-program port.
type programResult struct {
	Project        string
	RC             int
	Fatal          string
	Changed        []string // files the port wrote, relative to the project
	Chosen, Ported int
	Errors, Warns  int
	PORT040        int
	Broken         []string // changed .cu whose original compiles and whose port does not
}

func runProgram(cfg *config, dir string) programResult {
	root, _ := filepath.Abs(dir)
	pr := programResult{Project: filepath.Base(root)}
	work := filepath.Join(cfg.out, "work", pr.Project+".program")
	_ = os.RemoveAll(work)
	if err := copyTree(root, work); err != nil {
		pr.Fatal = "copy: " + err.Error()
		return pr
	}
	_, incs := scan(work)
	emptyCfg, _ := filepath.Abs(filepath.Join(cfg.out, "empty.bamgen.yaml"))
	_ = os.WriteFile(emptyCfg, []byte("{}\n"), 0o644)
	work, _ = filepath.Abs(work)
	args := []string{"port", "--auto", "--json", "-w", "--config", emptyCfg}
	for _, d := range incs {
		args = append(args, "-I", d)
	}
	before := snapshot(work)
	r := run(cfg.bamTimeout*10, work, cfg.bamgen, append(args, work)...)
	pr.RC, pr.Fatal = r.rc, fatalOf(r)
	_ = os.WriteFile(filepath.Join(work, ".port.json"), r.stdout, 0o644)
	_ = os.WriteFile(filepath.Join(work, ".port.err"), r.stderr, 0o644)
	var pj portJSON
	if err := json.Unmarshal(r.stdout, &pj); err != nil && pr.Fatal == "" {
		pr.Fatal = "bad json"
	}
	for _, f := range pj.Files {
		for _, d := range f.Diagnostics {
			switch d.Severity {
			case "warning":
				pr.Warns++
			case "error":
				pr.Errors++
			}
			if d.Code == "PORT040" {
				pr.PORT040++
			}
		}
		for _, c := range f.Choices {
			pr.Chosen++
			if c.Ported {
				pr.Ported++
			}
		}
	}
	after := snapshot(work)
	for rel, b := range after {
		if !bytes.Equal(before[rel], b) {
			pr.Changed = append(pr.Changed, rel)
		}
	}
	sort.Strings(pr.Changed)
	if !cfg.compile || pr.RC != 0 {
		return pr
	}
	for _, rel := range pr.Changed {
		if !strings.HasSuffix(rel, ".cu") {
			continue
		}
		orig := filepath.Join(root, rel)
		okOrig, _ := compile(cfg, orig, filepath.Dir(orig), incs, before[rel], filepath.Join(work, rel+".orig.nvcc.log"))
		if !okOrig {
			continue
		}
		out := filepath.Join(work, rel)
		if ok, _ := compile(cfg, out, filepath.Dir(out), incs, after[rel], filepath.Join(work, rel+".nvcc.log")); !ok {
			pr.Broken = append(pr.Broken, rel)
		}
	}
	return pr
}

// snapshot reads every regular file under dir (relative path -> bytes).
func snapshot(dir string) map[string][]byte {
	out := map[string][]byte{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".port.") {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil {
			rel, _ := filepath.Rel(dir, p)
			out[rel] = b
		}
		return nil
	})
	return out
}

// copyTree copies the regular files and directories under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		}
		return nil
	})
}

// programSummary renders OUT/program.md.
func programSummary(rs []programResult) string {
	var b strings.Builder
	b.WriteString("# Whole-program ports (`bamgen port --auto -w DIR`)\n\n")
	b.WriteString("| project | exit | files changed | chosen | ported | errors | warnings | PORT040 | changed .cu that no longer compile |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rs {
		broken := strings.Join(r.Broken, ", ")
		if broken == "" {
			broken = "none"
		}
		exit := fmt.Sprint(r.RC)
		if r.Fatal != "" {
			exit += " (" + r.Fatal + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %d | %s |\n", r.Project, exit, len(r.Changed), r.Chosen, r.Ported, r.Errors, r.Warns, r.PORT040, mdEscape(broken))
	}
	return b.String()
}
