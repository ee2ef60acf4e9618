package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/bamgen/bamgen/internal/sarifschema"
)

func sarifValidator(t *testing.T) *jsonschema.Schema {
	t.Helper()
	s, err := sarifschema.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type sarifDoc struct {
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Rules []struct {
					ID      string `json:"id"`
					HelpURI string `json:"helpUri"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			Level     string `json:"level"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
					Region struct {
						StartLine int `json:"startLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
		} `json:"results"`
	} `json:"runs"`
}

func checkSARIF(t *testing.T, s *jsonschema.Schema, out string) sarifDoc {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if err := s.Validate(inst); err != nil {
		t.Fatalf("not valid SARIF 2.1.0: %v\n%s", err, out)
	}
	var doc sarifDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// `bamgen port --format sarif` and `bamgen analyze --format sarif` print
// logs that validate against SARIF 2.1.0, with each code's rule linking to
// docs/diagnostics.md.
func TestFormatSARIF(t *testing.T) {
	s := sarifValidator(t)
	dir := t.TempDir()
	// out is ported; in is refused (compared: PORT011, line 3).
	src := "__global__ void k(const float* in, float* out, int n)\n{\n    if (in == nullptr) return;\n    int i = threadIdx.x;\n    out[i] = in[i];\n}\n"
	p := writeFile(t, dir, "k.cu", []byte(src))
	code, out, errOut := runMain(t, "port", "--array", "in", "--array", "out", "--format", "sarif", p)
	if code != 0 || errOut != "" {
		t.Fatalf("port --format sarif: exit %d, stderr %q", code, errOut)
	}
	doc := checkSARIF(t, s, out)
	found := false
	for _, r := range doc.Runs[0].Results {
		if r.RuleID == "PORT011" {
			found = true
			if l := r.Locations[0].PhysicalLocation.Region.StartLine; l != 3 || r.Level != "warning" {
				t.Errorf("PORT011 at line %d level %s, want line 3 warning", l, r.Level)
			}
		}
	}
	if !found {
		t.Errorf("no PORT011 result:\n%s", out)
	}
	for _, r := range doc.Runs[0].Tool.Driver.Rules {
		if !strings.HasSuffix(r.HelpURI, "docs/diagnostics.md#"+strings.ToLower(r.ID)) {
			t.Errorf("rule %s helpUri %q", r.ID, r.HelpURI)
		}
	}
	if strings.Contains(out, "__global__") {
		t.Error("--format sarif also printed the ported code on stdout")
	}

	bad := writeFile(t, dir, "bad.cu", []byte("__global__ void k(float* p) { p[0] = ({ 1; }); }\nint x = \"open;\n"))
	code, out, _ = runMain(t, "analyze", "--format", "sarif", bad, p)
	if code != exitFindings {
		t.Errorf("analyze --format sarif on a file with a parse error: exit %d, want %d", code, exitFindings)
	}
	doc = checkSARIF(t, s, out)
	if len(doc.Runs[0].Results) == 0 || !strings.HasPrefix(doc.Runs[0].Results[0].RuleID, "PARSE") {
		t.Errorf("analyze SARIF results: %+v", doc.Runs[0].Results)
	}

	// --format json is --json.
	_, jsonOut, _ := runMain(t, "port", "--array", "out", "--format", "json", p)
	_, jsonOld, _ := runMain(t, "port", "--array", "out", "--json", p)
	if jsonOut != jsonOld || !strings.Contains(jsonOut, `"files"`) {
		t.Errorf("--format json differs from --json:\n%s\n%s", jsonOut, jsonOld)
	}
}

func TestBuildFlagErrors(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "k.cu", []byte(portSrc))
	q := writeFile(t, dir, "q.cu", []byte(portSrc))
	// Outputs named here lie in the test's directory, so a case that
	// wrongly succeeds leaves nothing behind in the package's source.
	dep, out := filepath.Join(dir, "x.d"), filepath.Join(dir, "a.cu")
	for _, args := range [][]string{
		{"port", "--format", "xml", p},
		{"port", "--depfile", dep, p},
		{"port", "--depfile", dep, "-o", out, p, q},
		{"port", "--line-directives", "-w", p},
		{"port", "--format", "sarif", "-d", p},
		{"port", "--format", "sarif", "--json", p},
		{"port", "-j", "-1", p},
		{"analyze", "--format", "yaml", p},
	} {
		if code, out, errOut := runMain(t, args...); code != exitUsage || out != "" || !strings.Contains(errOut, "bamgen: error: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and an error", args, code, out, errOut)
		}
	}
}

// --depfile also lists the local headers the port read macros from, so a
// build re-ports the file when one of them changes.
func TestDepfileListsLocalHeaders(t *testing.T) {
	dir := t.TempDir()
	hdr := writeFile(t, dir, "defs.h", []byte("#define BLOCK 256\n"))
	src := writeFile(t, dir, "k.cu", []byte("#include \"defs.h\"\n"+portSrc))
	out := filepath.Join(dir, "out.cu")
	dep := out + ".d"
	if code, _, errOut := runMain(t, "port", "--array", "in", "--depfile", dep, "-o", out, src); code != 0 {
		t.Fatalf("port: exit %d: %s", code, errOut)
	}
	d, err := os.ReadFile(dep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(d), depEscape(src)+" \\\n  "+depEscape(hdr)+" \\\n") {
		t.Errorf("depfile does not list %s after the input:\n%s", hdr, d)
	}
}

// --depfile lists the input, the config next to it and the bamgen binary,
// with -o's file as the target; the output is written anew on every run
// (newer than the inputs even when its content did not change).
func TestDepfileAndLineDirectives(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, filepath.Join(dir), "k k.cu", []byte(portSrc))
	out := filepath.Join(dir, "out", "k.cu")
	mkdir(t, filepath.Dir(out))
	dep := out + ".d"
	port := func() {
		t.Helper()
		if code, _, errOut := runMain(t, "port", "--array", "in", "--line-directives", "--depfile", dep, "-o", out, src); code != 0 {
			t.Fatalf("port: exit %d: %s", code, errOut)
		}
	}
	port()
	d, err := os.ReadFile(dep)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	want := depEscape(out) + ": \\\n  " + depEscape(src) + " \\\n  " + depEscape(exe) + "\n"
	if string(d) != want {
		t.Errorf("depfile:\n%s\nwant:\n%s", d, want)
	}
	if !strings.Contains(string(d), `k\ k.cu`) {
		t.Errorf("space not escaped: %s", d)
	}
	ported, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(src)
	if !strings.HasPrefix(string(ported), "#line 1 \""+abs+"\"\n") || !strings.Contains(string(ported), "bam::array") {
		t.Errorf("ported copy lacks the #line directive or the port:\n%s", ported)
	}
	// The kernel keeps its original line (3) after bamgen's includes, through the port's own directive, renamed.
	if !strings.Contains(string(ported), "#line 2 \""+abs+"\"\n\n__global__ void scale(bam::array<const float> in") ||
		!strings.Contains(string(ported), "#line 17 \""+abs+"\"\n    bam_rt.check_launch(\"scale\", 256);\n    cudaMemcpy(") {
		// (and a check the port put on a line of its own shows the launch's line)
		t.Errorf("kernel not renumbered to its original line:\n%s", ported)
	}

	// A config next to the input is a dependency; the output is rewritten.
	writeFile(t, dir, ".bamgen.yaml", []byte("arrays:\n  - name: in\n"))
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(out, old, old); err != nil {
		t.Fatal(err)
	}
	port()
	d, _ = os.ReadFile(dep)
	if !strings.Contains(string(d), depEscape(filepath.Join(dir, ".bamgen.yaml"))) {
		t.Errorf("depfile lacks the config:\n%s", d)
	}
	if st, err := os.Stat(out); err != nil || !st.ModTime().After(old.Add(time.Minute)) {
		t.Errorf("output not written anew: %v %v", st.ModTime(), err)
	}
	again, _ := os.ReadFile(out)
	if !bytes.Equal(again, ported) {
		t.Error("same input, different output")
	}
}

func TestDepEscape(t *testing.T) {
	if got := depEscape("a b/#c$d"); got != `a\ b/\#c$$d` {
		t.Errorf("depEscape = %q", got)
	}
}

func TestRunEachProgress(t *testing.T) {
	var progress bytes.Buffer
	seen := make([]bool, 5)
	runEach(5, 2, "ported", &progress, func(i int) { seen[i] = true })
	for i, s := range seen {
		if !s {
			t.Errorf("item %d not run", i)
		}
	}
	got := progress.String()
	if !strings.Contains(got, "\rbamgen: ported 1/5 files") || !strings.Contains(got, "\rbamgen: ported 5/5 files") || !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("progress %q", got)
	}
	// Not a terminal (tests write to buffers): no progress line at all.
	if isTerminal(&progress) {
		t.Error("a buffer counted as a terminal")
	}
	// -j 1 runs in order.
	var order []int
	runEach(4, 1, "x", nil, func(i int) { order = append(order, i) })
	if len(order) != 4 || order[0] != 0 || order[3] != 3 {
		t.Errorf("-j 1 order %v", order)
	}
}
