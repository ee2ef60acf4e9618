// Package sarifschema compiles the SARIF 2.1.0 schema subset that the tests
// of diag and cmd/bamgen validate bamgen's SARIF output against: the part
// of SARIF 2.1.0 bamgen writes, written from the specification, with
// "format" (uri, uri-reference) asserted. Only tests import it.
package sarifschema

import (
	"bytes"
	_ "embed"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed sarif-2.1.0-subset.schema.json
var schemaJSON []byte

// Compile returns the compiled schema.
func Compile() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("sarif.json")
}
