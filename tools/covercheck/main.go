// Command covercheck reads a Go coverage profile (go test -coverprofile,
// with -coverpkg naming the packages of interest), merges the blocks every
// test binary reports, and prints statement coverage per package and in
// total. It exits 1 when a package it is told to check is below its
// threshold, so CI fails when coverage drops.
//
//	covercheck -profile build/cover.out -min 90 [-pkg github.com/bamgen/bamgen/transform/opt=85 ...]
//
// -min applies to every package in the profile; -pkg sets a package's own
// threshold (a path suffix is enough), overriding -min for it. Package
// names come from the profile, so the tool follows packages when they move.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
)

type block struct {
	stmts int
	hit   bool
}

type pkgFlags map[string]float64

func (p pkgFlags) String() string { return fmt.Sprint(map[string]float64(p)) }

func (p pkgFlags) Set(s string) error {
	name, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want PACKAGE=PERCENT, got %q", s)
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return err
	}
	p[name] = f
	return nil
}

func main() {
	profile := flag.String("profile", "build/cover.out", "coverage profile to read")
	min := flag.Float64("min", 0, "minimum statement coverage (percent) of every package")
	per := pkgFlags{}
	flag.Var(per, "pkg", "PACKAGE=PERCENT: a package's own minimum (repeatable; a path suffix matches)")
	flag.Parse()
	f, err := os.Open(*profile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "covercheck: %v\n", err)
		os.Exit(2)
	}
	defer f.Close()
	blocks, err := read(f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "covercheck: %s: %v\n", *profile, err)
		os.Exit(2)
	}
	if len(blocks) == 0 {
		fmt.Fprintf(os.Stderr, "covercheck: %s holds no coverage blocks; was -coverpkg given?\n", *profile)
		os.Exit(2)
	}
	os.Exit(report(os.Stdout, blocks, *min, per))
}

// read merges the profile's blocks: a block counts as run when any test
// binary ran it.
func read(r io.Reader) (map[string]block, error) {
	blocks := map[string]block{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if line == 1 && strings.HasPrefix(text, "mode:") || text == "" {
			continue
		}
		// file.go:l0.c0,l1.c1 stmts count
		f := strings.Fields(text)
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: want `file:range stmts count`, got %q", line, text)
		}
		stmts, err1 := strconv.Atoi(f[1])
		count, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("line %d: bad numbers in %q", line, text)
		}
		b := blocks[f[0]]
		b.stmts = stmts
		b.hit = b.hit || count > 0
		blocks[f[0]] = b
	}
	return blocks, sc.Err()
}

type tally struct{ run, all int }

func (t tally) percent() float64 {
	if t.all == 0 {
		return 100
	}
	return 100 * float64(t.run) / float64(t.all)
}

func report(w io.Writer, blocks map[string]block, min float64, per pkgFlags) int {
	pkgs := map[string]*tally{}
	var total tally
	for key, b := range blocks {
		file, _, _ := strings.Cut(key, ":")
		p := path.Dir(file)
		t := pkgs[p]
		if t == nil {
			t = &tally{}
			pkgs[p] = t
		}
		t.all += b.stmts
		total.all += b.stmts
		if b.hit {
			t.run += b.stmts
			total.run += b.stmts
		}
	}
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	failed := 0
	used := map[string]bool{}
	for _, p := range names {
		t := pkgs[p]
		want, from := min, ""
		for suffix, v := range per {
			if p == suffix || strings.HasSuffix(p, "/"+suffix) {
				want, from = v, " (own)"
				used[suffix] = true
			}
		}
		status := "ok"
		if t.percent() < want {
			status = "FAIL"
			failed++
		}
		fmt.Fprintf(w, "%-50s %5d/%-5d %5.1f%%  min %.1f%%%s  %s\n", p, t.run, t.all, t.percent(), want, from, status)
	}
	fmt.Fprintf(w, "%-50s %5d/%-5d %5.1f%%\n", "total", total.run, total.all, total.percent())
	for suffix := range per {
		if !used[suffix] {
			fmt.Fprintf(w, "covercheck: -pkg %s matches no package in the profile\n", suffix)
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(w, "covercheck: %d check(s) failed: statement coverage below the minimum; add tests (goldens in testdata/) for the code that no test runs (go tool cover -html)\n", failed)
		return 1
	}
	return 0
}
