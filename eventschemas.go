package main

import (
	"embed"
	"io/fs"

	"github.com/syncverse/hub/internal/eventschema"
)

// schemaFiles are the JSON Schemas of event data, embedded from docs/schemas: the binary holds events to the very
// files the docs show.
//
//go:embed docs/schemas/*.json
var schemaFiles embed.FS

// compileEventSchemas compiles the embedded schemas; serve and hub publish do so once, at start.
func compileEventSchemas() (*eventschema.Set, error) {
	dir, err := fs.Sub(schemaFiles, "docs/schemas")
	if err != nil {
		return nil, err
	}
	return eventschema.Compile(dir)
}
