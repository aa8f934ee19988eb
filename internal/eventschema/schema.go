package eventschema

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/syncverse/hub/hub"
)

// Types are the event types with a schema, each in the file <type>.json.
var Types = []string{"progress", "lock", "health"}

// Set is the compiled schema of each of Types. Its zero value knows no type.
type Set struct {
	byType map[string]*jsonschema.Schema
}

// Compile reads <type>.json of each of Types from fsys (docs/schemas) and compiles it, formats asserted (a health
// event's since is checked to be a date-time).
func Compile(fsys fs.FS) (*Set, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	s := &Set{byType: map[string]*jsonschema.Schema{}}
	for _, typ := range Types {
		name := typ + ".json"
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("event schemas: %w", err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("event schemas: %s: %w", name, err)
		}
		url := "file:///docs/schemas/" + name
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("event schemas: %s: %w", name, err)
		}
		if s.byType[typ], err = c.Compile(url); err != nil {
			return nil, fmt.Errorf("event schemas: %s: %w", name, err)
		}
	}
	return s, nil
}

// Knows reports whether typ has a schema; an empty type is hub.DefaultType, as publishers read it.
func (s *Set) Knows(typ string) bool {
	_, ok := s.byType[orDefault(typ)]
	return ok
}

// Validate checks data against typ's schema. It returns nil for a type without one and for data that is not JSON
// at all, which is the publisher's rules to refuse, not a schema's; otherwise a *Invalid naming each field wrong.
func (s *Set) Validate(typ string, data []byte) error {
	typ = orDefault(typ)
	if typ == "progress" && s.byType[typ] != nil && progressValid(data) {
		return nil
	}
	return s.validate(typ, data)
}

// validate is Validate through the library alone.
func (s *Set) validate(typ string, data []byte) error {
	sch := s.byType[typ]
	if sch == nil {
		return nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil
	}
	err = sch.Validate(v)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err // nil, or nothing a schema says
	}
	return &Invalid{Type: typ, Problems: problems(ve, sch, v)}
}

func orDefault(typ string) string {
	if typ == "" {
		return hub.DefaultType
	}
	return typ
}

// Invalid is data that does not match its type's schema.
type Invalid struct {
	Type     string
	Problems []Problem // at least one
}

// Problem is one thing wrong, at one field.
type Problem struct {
	Field string // the field's path, dotted (step, items.0), or "data" for the whole value
	Text  string // what is wrong with it: "40 is not between 0 and 1"
}

func (p Problem) String() string { return p.Field + ": " + p.Text }

// Detail is every problem, "; "-separated: "progress: 40 is not between 0 and 1; status: ...".
func (e *Invalid) Detail() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return strings.Join(parts, "; ")
}

// Warnings is every problem, one string each ("progress: 40 is not between 0 and 1"): what a publisher hands back
// in mode warn.
func (e *Invalid) Warnings() []string {
	out := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p.String()
	}
	return out
}

func (e *Invalid) Error() string {
	return fmt.Sprintf("%s data does not match docs/schemas/%s.json: %s", e.Type, e.Type, e.Detail())
}
