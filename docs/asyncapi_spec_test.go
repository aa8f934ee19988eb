package docs_test

import (
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// docs/asyncapi.yaml is a valid AsyncAPI 3.0.0 document by the specification's own JSON Schema
// (docs/testdata/asyncapi/3.0.0.json, from @asyncapi/specs): every object, binding and field where the spec allows it.
func TestAsyncAPIMatchesTheSpecification(t *testing.T) {
	spec, err := jsonschema.NewCompiler().Compile("docs/testdata/asyncapi/3.0.0.json")
	if err != nil {
		t.Fatalf("compile the AsyncAPI 3.0.0 schema: %v", err)
	}
	if err := spec.Validate(any(loadAsyncAPI(t))); err != nil {
		t.Errorf("%s is not a valid AsyncAPI 3.0.0 document:\n%#v", asyncAPIFile, err)
	}
	// The schema holds a document to it, not only to its top: an operation's action is one of two words.
	bad := loadAsyncAPI(t)
	mapAt(bad, "operations", "streamEvents")["action"] = "publish"
	if spec.Validate(any(bad)) == nil {
		t.Error("the AsyncAPI 3.0.0 schema accepts an operation with action publish; want it refused")
	}
}
