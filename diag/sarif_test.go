package diag

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/bamgen/bamgen/internal/sarifschema"
)

func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	s, err := sarifschema.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ValidateSARIF fails t when out is not a SARIF 2.1.0 log (schema subset).
func validateSARIF(t *testing.T, s *jsonschema.Schema, out []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	return s.Validate(inst)
}

func sampleSARIF(t *testing.T) []byte {
	t.Helper()
	a := NewSource("dir/kernel file.cu", []byte("__global__ void k(float* p) {\n  // é\n  p[0] = 1;\n}\n"))
	b := NewSource("/abs/b.cu", []byte("int x = 1\n"))
	var out bytes.Buffer
	err := WriteSARIF(&out, SARIFTool{Name: "bamgen", Version: "v1.2.3", InformationURI: "https://github.com/bamgen/bamgen"}, "/work/repo", []SARIFFile{
		{Src: a, Diags: []Diagnostic{
			{Pos: 40, End: 44, Severity: Warning, Code: "PORT010", Message: "address of p taken; <kept> & \"quoted\""},
			{Pos: 18, End: 26, Severity: Note, Code: "PORT090", Message: "ported p"},
			{Pos: 42, End: 43, Severity: Warning, Code: "PORT010", Message: "again"},
		}},
		{Src: b, Diags: []Diagnostic{
			{Pos: 9, End: 9, Severity: Warning, Code: "PARSE013", Message: "expected ';'"},
			{Pos: 0, End: 0, Severity: Error, Code: "", Message: "no code"},
		}},
		{Src: NewSource("clean.cu", nil)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestSARIFValidates(t *testing.T) {
	s := sarifSchema(t)
	out := sampleSARIF(t)
	if err := validateSARIF(t, s, out); err != nil {
		t.Fatalf("SARIF output does not validate: %v\n%s", err, out)
	}
	// An empty report is a valid log too.
	var empty bytes.Buffer
	if err := WriteSARIF(&empty, SARIFTool{Name: "bamgen"}, "", nil); err != nil {
		t.Fatal(err)
	}
	if err := validateSARIF(t, s, empty.Bytes()); err != nil {
		t.Fatalf("empty SARIF log does not validate: %v\n%s", err, empty.Bytes())
	}
}

// The schema is strict enough to reject what a SARIF consumer would: each
// mutation of a valid log must fail validation.
func TestSARIFSchemaRejects(t *testing.T) {
	s := sarifSchema(t)
	out := string(sampleSARIF(t))
	for _, m := range []struct{ name, old, new string }{
		{"wrong version", `"version": "2.1.0"`, `"version": "2.0.0"`},
		{"unknown level", `"level": "warning"`, `"level": "fatal"`},
		{"zero start line", `"startLine": 3`, `"startLine": 0`},
		{"misspelled property", `"ruleId"`, `"ruleID"`},
		{"message without text", `"text": "ported p"`, `"txt": "ported p"`},
		{"helpUri not a URI", `"helpUri": "https://github.com/bamgen/bamgen/blob/main/docs/diagnostics.md#port010"`, `"helpUri": "docs diagnostics"`},
	} {
		bad := strings.Replace(out, m.old, m.new, 1)
		if bad == out {
			t.Fatalf("%s: %q not in the output:\n%s", m.name, m.old, out)
		}
		if err := validateSARIF(t, s, []byte(bad)); err == nil {
			t.Errorf("%s: the schema accepted it", m.name)
		}
	}
}

func TestSARIFContent(t *testing.T) {
	var log sarifLog
	if err := json.Unmarshal(sampleSARIF(t), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if got := len(run.Results); got != 5 {
		t.Fatalf("%d results, want 5", got)
	}
	rules := run.Tool.Driver.Rules
	var ids []string
	for _, r := range rules {
		ids = append(ids, r.ID)
	}
	// One rule per code that occurs, in order of first occurrence (results are
	// sorted by position within a file).
	if strings.Join(ids, ",") != "PORT090,PORT010,PARSE013" {
		t.Errorf("rules %v", ids)
	}
	for _, r := range run.Results {
		if r.RuleID == "" {
			if r.RuleIndex != nil {
				t.Errorf("result without a code has ruleIndex %d", *r.RuleIndex)
			}
			continue
		}
		if r.RuleIndex == nil || rules[*r.RuleIndex].ID != r.RuleID {
			t.Errorf("result %s: ruleIndex does not point at its rule", r.RuleID)
		}
	}
	if rules[1].HelpURI != DocsURL+"#port010" || rules[1].ShortDescription == nil || rules[1].DefaultConfiguration.Level != "warning" {
		t.Errorf("rule PORT010: %+v", rules[1])
	}
	r0 := run.Results[0] // PORT090 at offset 18: line 1, column 19
	loc := r0.Locations[0].PhysicalLocation
	if loc.ArtifactLocation.URI != "dir/kernel%20file.cu" || loc.ArtifactLocation.URIBaseID != "SRCROOT" {
		t.Errorf("artifact %+v", loc.ArtifactLocation)
	}
	if g := loc.Region; g.StartLine != 1 || g.StartColumn != 19 || g.ByteOffset != 18 || g.ByteLength != 8 {
		t.Errorf("region %+v", g)
	}
	r1 := run.Results[1] // PORT010 at offset 40: line 3 (after "  // é\n", é is one column), column 3
	if g := r1.Locations[0].PhysicalLocation.Region; g.StartLine != 3 || g.StartColumn != 3 || g.EndColumn != 7 {
		t.Errorf("region %+v", g)
	}
	if r1.Message.Text != `address of p taken; <kept> & "quoted"` || r1.Level != "warning" {
		t.Errorf("result %+v", r1)
	}
	abs := run.Results[3].Locations[0].PhysicalLocation.ArtifactLocation
	if abs.URI != "file:///abs/b.cu" || abs.URIBaseID != "" {
		t.Errorf("absolute artifact %+v", abs)
	}
	if run.OriginalURIBaseIDs["SRCROOT"].URI != "file:///work/repo/" || run.ColumnKind != "unicodeCodePoints" {
		t.Errorf("run %+v", run)
	}
}

func TestFileURI(t *testing.T) {
	for in, want := range map[string]string{
		"a.cu":          "a.cu",
		"./a.cu":        "a.cu",
		"d/x#1.cu":      "d/x%231.cu",
		"c:d.cu":        "./c:d.cu",
		"/tmp/a b/k.cu": "file:///tmp/a%20b/k.cu",
	} {
		if got := fileURI(in); got != want {
			t.Errorf("fileURI(%q) = %q, want %q", in, got, want)
		}
	}
}
