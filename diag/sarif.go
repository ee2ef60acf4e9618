package diag

import (
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"strings"
)

// SARIF 2.1.0 output (OASIS Static Analysis Results Interchange Format),
// the form code-review tools read to show diagnostics inline. One run per
// report; one result per diagnostic; one rule per code that occurs, with
// its title and a helpUri into docs/diagnostics.md.

// SARIFSchema is the schema URI a SARIF 2.1.0 log names.
const SARIFSchema = "https://json.schemastore.org/sarif-2.1.0.json"

// SARIFTool names the program in a SARIF report.
type SARIFTool struct {
	Name, Version, InformationURI string
}

// SARIFFile is one file's diagnostics.
type SARIFFile struct {
	Src   *Source
	Diags []Diagnostic
}

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool               sarifTool                `json:"tool"`
	OriginalURIBaseIDs map[string]sarifArtifact `json:"originalUriBaseIds,omitempty"`
	ColumnKind         string                   `json:"columnKind"`
	Results            []sarifResult            `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string       `json:"id"`
	ShortDescription     *sarifText   `json:"shortDescription,omitempty"`
	HelpURI              string       `json:"helpUri"`
	DefaultConfiguration *sarifConfig `json:"defaultConfiguration,omitempty"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId,omitempty"`
	RuleIndex *int            `json:"ruleIndex,omitempty"`
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn"`
	EndLine     int `json:"endLine"`
	EndColumn   int `json:"endColumn"`
	ByteOffset  int `json:"byteOffset"`
	ByteLength  int `json:"byteLength"`
}

// srcRoot is the uriBaseId of relative paths: the directory bamgen ran in.
const srcRoot = "SRCROOT"

// WriteSARIF writes the diagnostics of files as one SARIF 2.1.0 log.
// Relative file names are given relative to %SRCROOT%, which the log
// resolves to root (an absolute directory, normally the working directory),
// so that review tools can match them to repository paths. Columns count
// Unicode code points, as the text diagnostics do.
func WriteSARIF(w io.Writer, tool SARIFTool, root string, files []SARIFFile) error {
	run := sarifRun{
		Tool:       sarifTool{Driver: sarifDriver{Name: tool.Name, Version: tool.Version, InformationURI: tool.InformationURI, Rules: []sarifRule{}}},
		ColumnKind: "unicodeCodePoints",
		Results:    []sarifResult{},
	}
	ruleIndex := map[string]int{}
	relative := false
	for _, f := range files {
		loc := sarifArtifact{URI: fileURI(f.Src.Name)}
		if !filepath.IsAbs(f.Src.Name) {
			loc.URIBaseID, relative = srcRoot, true
		}
		for _, d := range Sorted(f.Diags) {
			r := sarifResult{Level: d.Severity.String(), Message: sarifText{Text: d.Message}}
			if d.Code != "" {
				i, ok := ruleIndex[d.Code]
				if !ok {
					i = len(run.Tool.Driver.Rules)
					ruleIndex[d.Code] = i
					run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, ruleFor(d.Code))
				}
				r.RuleID, r.RuleIndex = d.Code, &i
			}
			l, c := f.Src.LineCol(d.Pos)
			el, ec := f.Src.LineCol(max(d.End, d.Pos))
			r.Locations = []sarifLocation{{PhysicalLocation: sarifPhysical{ArtifactLocation: loc,
				Region: sarifRegion{StartLine: l, StartColumn: c, EndLine: el, EndColumn: ec,
					ByteOffset: d.Pos, ByteLength: max(d.End-d.Pos, 0)}}}}
			run.Results = append(run.Results, r)
		}
	}
	if relative && root != "" {
		run.OriginalURIBaseIDs = map[string]sarifArtifact{srcRoot: {URI: dirURI(root)}}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: SARIFSchema, Version: "2.1.0", Runs: []sarifRun{run}})
}

func ruleFor(code string) sarifRule {
	r := sarifRule{ID: code, HelpURI: HelpURI(code)}
	if c, ok := LookupCode(code); ok {
		r.ShortDescription = &sarifText{Text: c.Title}
		r.DefaultConfiguration = &sarifConfig{Level: c.Level.String()}
	}
	return r
}

// fileURI turns a file name into a URI reference: a relative one for a
// relative name, file:///... for an absolute one.
func fileURI(name string) string {
	p := filepath.ToSlash(name)
	u := (&url.URL{Path: p}).EscapedPath()
	if filepath.IsAbs(name) {
		return "file://" + u
	}
	u = strings.TrimPrefix(u, "./")
	if first, _, _ := strings.Cut(u, "/"); strings.Contains(first, ":") {
		u = "./" + u // "a:b.cu" would read as a URI scheme
	}
	return u
}

// dirURI is the file: URI of an absolute directory, ending in a slash as
// SARIF requires of a base URI.
func dirURI(dir string) string {
	u := fileURI(dir)
	if !strings.HasSuffix(u, "/") {
		u += "/"
	}
	return u
}
