// Package docs holds the hub's documentation, and embeds what the binary and the tests read from it: the JSON
// Schemas of event data (docs/schemas), which the hub holds events to, so the binary and the docs cannot disagree.
package docs

import (
	"embed"
	"io/fs"
)

//go:embed schemas/*.json
var schemaFiles embed.FS

// Schemas is the directory of event data's JSON Schemas, one <type>.json each.
func Schemas() fs.FS {
	dir, err := fs.Sub(schemaFiles, "schemas")
	if err != nil {
		panic(err) // the embedded directory exists: the build embeds it
	}
	return dir
}
