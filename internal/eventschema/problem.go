package eventschema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// maxShown is how much of a wrong value a problem quotes.
const maxShown = 40

var printer = message.NewPrinter(language.English)

// problems turns a validation error's leaves into problems in the words of the schema's reader, each once, by
// field (the validator walks an object's properties in no fixed order).
func problems(ve *jsonschema.ValidationError, root *jsonschema.Schema, inst any) []Problem {
	var out []Problem
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		for _, p := range describe(e, root, inst) {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	walk(ve)
	slices.SortStableFunc(out, func(a, b Problem) int { return strings.Compare(a.Field, b.Field) })
	if len(out) == 0 { // a leaf always says something; this keeps Invalid's promise of one problem regardless
		out = append(out, Problem{Field: "data", Text: ve.ErrorKind.LocalizedString(printer)})
	}
	return out
}

// describe is one leaf error as problems: a missing field and an unknown one are named as the field itself.
func describe(e *jsonschema.ValidationError, root *jsonschema.Schema, inst any) []Problem {
	field := fieldName(e.InstanceLocation)
	got := shown(valueAt(inst, e.InstanceLocation))
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		var out []Problem
		for _, m := range k.Missing {
			out = append(out, Problem{Field: fieldName(append(slices.Clone(e.InstanceLocation), m)), Text: "missing (required)"})
		}
		return out
	case *kind.AdditionalProperties:
		var out []Problem
		for _, p := range k.Properties {
			out = append(out, Problem{Field: fieldName(append(slices.Clone(e.InstanceLocation), p)), Text: "unknown field (not allowed here)"})
		}
		return out
	case *kind.Minimum, *kind.Maximum:
		return []Problem{{Field: field, Text: outOfRange(got, e.ErrorKind, schemaAt(root, e.InstanceLocation))}}
	case *kind.Enum:
		return []Problem{{Field: field, Text: fmt.Sprintf("%s is not one of %s", got, choices(k.Want))}}
	case *kind.Type:
		return []Problem{{Field: field, Text: fmt.Sprintf("%s is %s, not %s", got, article(k.Got), orList(k.Want))}}
	case *kind.MinLength:
		if k.Want == 1 {
			return []Problem{{Field: field, Text: "empty (at least 1 character)"}}
		}
		return []Problem{{Field: field, Text: fmt.Sprintf("%s is shorter than %d characters", got, k.Want)}}
	case *kind.Format:
		return []Problem{{Field: field, Text: fmt.Sprintf("%s is not a %s%s", got, k.Want, formatHint(k.Want))}}
	}
	return []Problem{{Field: field, Text: e.ErrorKind.LocalizedString(printer)}}
}

// outOfRange says a number is below a minimum or above a maximum; with both bounds in the schema it names the
// range, which is what a reader of "progress: 40" needs to see.
func outOfRange(got string, k jsonschema.ErrorKind, sch *jsonschema.Schema) string {
	if sch != nil && sch.Minimum != nil && sch.Maximum != nil {
		return fmt.Sprintf("%s is not between %s and %s", got, ratText(sch.Minimum), ratText(sch.Maximum))
	}
	if m, ok := k.(*kind.Minimum); ok {
		return fmt.Sprintf("%s is less than %s", got, ratText(m.Want))
	}
	return fmt.Sprintf("%s is more than %s", got, ratText(k.(*kind.Maximum).Want))
}

func formatHint(format string) string {
	if format == "date-time" {
		return " (RFC 3339, e.g. 2026-11-29T10:15:00Z)"
	}
	return ""
}

// fieldName is an instance location as a dotted path; the whole value is "data". A name with a control character
// is quoted, and so is an empty one, so a problem names its field on one line wherever it is printed.
func fieldName(loc []string) string {
	if len(loc) == 0 {
		return "data"
	}
	parts := make([]string, len(loc))
	for i, p := range loc {
		parts[i] = p
		if p == "" || strings.ContainsFunc(p, unicode.IsControl) {
			parts[i] = strconv.Quote(p)
		}
	}
	return strings.Join(parts, ".")
}

// valueAt is the value at loc in a decoded instance (objects and arrays), or nil.
func valueAt(v any, loc []string) any {
	for _, p := range loc {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// schemaAt follows loc through a schema's properties and items, as far as this hub's schemas nest.
func schemaAt(s *jsonschema.Schema, loc []string) *jsonschema.Schema {
	for _, p := range loc {
		for s != nil && s.Ref != nil {
			s = s.Ref
		}
		if s == nil {
			return nil
		}
		if next, ok := s.Properties[p]; ok {
			s = next
		} else if s.Items2020 != nil {
			s = s.Items2020
		} else {
			return nil
		}
	}
	return s
}

// shown is a value as JSON, cut to maxShown bytes.
func shown(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > maxShown {
		return string(b[:maxShown]) + "…"
	}
	return string(b)
}

func ratText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// choices lists an enum's values as a reader types them: strings unquoted.
func choices(want []any) string {
	parts := make([]string, len(want))
	for i, w := range want {
		if s, ok := w.(string); ok {
			parts[i] = s
		} else {
			parts[i] = shown(w)
		}
	}
	return strings.Join(parts, ", ")
}

func orList(types []string) string {
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = article(t)
	}
	return strings.Join(parts, " or ")
}

// article is a JSON type's name with its article: "an object", "a number".
func article(t string) string {
	if t == "" {
		return "nothing"
	}
	if strings.ContainsRune("aeiou", rune(t[0])) {
		return "an " + t
	}
	return "a " + t
}
