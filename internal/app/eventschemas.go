package app

import (
	"github.com/syncverse/hub/docs"
	"github.com/syncverse/hub/internal/eventschema"
)

// CompileEventSchemas compiles the schemas of event data embedded from docs/schemas (package docs): the binary holds
// events to the very files the docs show. serve and hub publish do so once, at start.
func CompileEventSchemas() (*eventschema.Set, error) {
	return eventschema.Compile(docs.Schemas())
}
