package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// LoadFile decodes a YAML file over cfg; an unknown key is an error, so a typo never passes silently.
func LoadFile(cfg *Config, path string) error { return loadFile(cfg, path, nil) }

// loadFile checks the whole file against the configuration's keys first, so that every problem is reported at once
// in config.yaml's words (keys and values, not Go types), and decodes it only when there is none. It records the
// line of every key it sets in src.
func loadFile(cfg *Config, path string, src Sources) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil // empty, or comments only
	}
	c := fileCheck{path: path, src: src, said: map[string]bool{}, open: map[*yaml.Node]bool{}}
	c.value(doc.Content[0], reflect.TypeOf(Config{}), "")
	if len(c.errs) > 0 {
		return errors.Join(c.errs...)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err = dec.Decode(cfg)
	var te *yaml.TypeError
	switch {
	case err == nil || errors.Is(err, io.EOF):
		return nil
	case errors.As(err, &te): // what the check above missed, in yaml's words, still one problem a line
		for _, e := range te.Errors {
			c.errs = append(c.errs, fmt.Errorf("%s: %s", path, e))
		}
		return errors.Join(c.errs...)
	}
	return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
}

// fileCheck walks a YAML document along the configuration's types.
type fileCheck struct {
	path string
	src  Sources
	errs []error
	said map[string]bool // the problems in errs, each recorded once
	// open holds the mappings and lists being walked, so that an alias to one of them (a loop, which the YAML parser
	// takes) is refused instead of walked forever; aliases counts the aliases followed, which nesting can multiply.
	open    map[*yaml.Node]bool
	aliases int
}

// maxAliases bounds the aliases one file may expand: a handful is what a configuration uses, and aliases of aliases
// of lists multiply the walk (a few lines can name a billion nodes).
const maxAliases = 1000

// resolve follows an alias to what it names; false (the problem reported) for a loop or too many aliases.
func (c *fileCheck) resolve(n *yaml.Node, key string) (*yaml.Node, bool) {
	if n.Kind != yaml.AliasNode {
		return n, true
	}
	c.aliases++
	switch {
	case c.aliases == maxAliases+1:
		c.fail(n, "%s: *%s is one alias too many: the file expands more than %d, its aliases nest too deep", orFile(key), n.Value, maxAliases)
		return nil, false
	case c.aliases > maxAliases:
		return nil, false
	case c.open[n.Alias]:
		c.fail(n, "%s: *%s names a mapping or list that holds it (a loop)", orFile(key), n.Value)
		return nil, false
	}
	return n.Alias, true
}

// orFile names key, or the file itself for its top level.
func orFile(key string) string { return cmp.Or(key, "the file") }

// enter marks a mapping or list as being walked until the returned function runs.
func (c *fileCheck) enter(n *yaml.Node) func() {
	c.open[n] = true
	return func() { delete(c.open, n) }
}

var durationType = reflect.TypeOf(time.Duration(0))

// fail records a problem at n's line, once: an alias walks the mapping it names again, with the same problems.
func (c *fileCheck) fail(n *yaml.Node, format string, args ...any) {
	msg := fmt.Sprintf("%s: line %d: %s", c.path, n.Line, fmt.Sprintf(format, args...))
	if !c.said[msg] {
		c.said[msg] = true
		c.errs = append(c.errs, errors.New(msg))
	}
}

// value checks node n as the value of key, of type t.
func (c *fileCheck) value(n *yaml.Node, t reflect.Type, key string) {
	n, ok := c.resolve(n, key)
	if !ok {
		return
	}
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		defer c.enter(n)()
	}
	if n.ShortTag() == "!!null" {
		return // yaml leaves the default
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		c.src.set(key, fmt.Sprintf("file %s:%d", c.path, n.Line))
	}
	switch {
	case t.Kind() == reflect.Struct:
		c.section(n, t, key)
	case t.Kind() == reflect.Slice:
		if !c.want(n, yaml.SequenceNode, key) {
			return
		}
		for i, e := range n.Content {
			c.value(e, t.Elem(), fmt.Sprintf("%s[%d]", key, i))
		}
	case t.Kind() == reflect.Map:
		if !c.want(n, yaml.MappingNode, key) {
			return
		}
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if c.once(seen, n.Content[i], key) {
				c.value(n.Content[i+1], t.Elem(), key+"."+n.Content[i].Value)
			}
		}
	default:
		if c.want(n, yaml.ScalarNode, key) {
			c.scalar(n, t, key)
		}
	}
}

// section checks a mapping of the keys of struct type t; an unknown one is named with the closest known key.
func (c *fileCheck) section(n *yaml.Node, t reflect.Type, key string) {
	if !c.want(n, yaml.MappingNode, key) {
		return
	}
	fields := map[string]reflect.Type{}
	var known []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if tag == "" && f.IsExported() {
			tag = strings.ToLower(f.Name) // yaml's name for an untagged field
		}
		if tag != "" && tag != "-" {
			fields[tag] = f.Type
			known = append(known, join(key, tag))
		}
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" { // a merge key: the merged mappings hold keys of this section
			c.merge(v, t, key)
			continue
		}
		if !c.once(seen, k, key) {
			continue
		}
		ft, ok := fields[k.Value]
		if !ok {
			c.fail(k, "unknown key %s%s", join(key, k.Value), suggest(join(key, k.Value), known))
			continue
		}
		c.value(v, ft, join(key, k.Value))
	}
}

// once reports a key given twice in one mapping, which yaml refuses.
func (c *fileCheck) once(seen map[string]int, k *yaml.Node, section string) bool {
	if first, dup := seen[k.Value]; dup {
		c.fail(k, "%s is given twice (first on line %d)", join(section, k.Value), first)
		return false
	}
	seen[k.Value] = k.Line
	return true
}

// merge checks the mappings a merge key (<<) brings into a section; yaml takes one or a list of them, nothing else.
func (c *fileCheck) merge(v *yaml.Node, t reflect.Type, key string) {
	v, ok := c.resolve(v, join(key, "<<"))
	if !ok {
		return
	}
	list := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		list = v.Content
	}
	for _, m := range list {
		m, ok := c.resolve(m, join(key, "<<"))
		if !ok {
			continue
		}
		if m.Kind != yaml.MappingNode {
			c.fail(m, "%s: wants keys and values (or a list of them) to merge", join(key, "<<"))
			continue
		}
		c.value(m, t, key)
	}
}

// want reports a node of another kind than the key needs.
func (c *fileCheck) want(n *yaml.Node, kind yaml.Kind, key string) bool {
	if n.Kind == kind {
		return true
	}
	names := map[yaml.Kind]string{yaml.ScalarNode: "a single value", yaml.SequenceNode: "a list", yaml.MappingNode: "keys and values"}
	if key == "" {
		c.fail(n, "the file must hold keys and values (listen: ..., redis: ...), not %s", names[n.Kind])
		return false
	}
	c.fail(n, "%s: wants %s, not %s", key, names[kind], names[n.Kind])
	return false
}

// scalar checks a single value by decoding it as yaml would, and says what is wrong in the file's terms.
func (c *fileCheck) scalar(n *yaml.Node, t reflect.Type, key string) {
	v := n.Value
	isInt := t.Kind() == reflect.Int || t.Kind() == reflect.Int64
	if f, err := strconv.ParseFloat(v, 64); isInt && t != durationType && err == nil && f != math.Trunc(f) {
		c.fail(n, "%s: %q is not a whole number", key, v) // yaml would cut it to one silently
		return
	}
	if n.Decode(reflect.New(t).Interface()) == nil {
		return
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.TaggedStyle) != 0 {
		plain := &yaml.Node{Kind: yaml.ScalarNode, Value: v}
		if plain.Decode(reflect.New(t).Interface()) == nil {
			c.fail(n, "%s: %q is quoted (or tagged), which makes it text: write %s", key, v, v)
			return
		}
	}
	switch {
	case t == durationType && isNumber(v):
		c.fail(n, "%s: %q needs a unit, e.g. %ss", key, v, v)
	case t == durationType:
		c.fail(n, "%s: %q is not a duration, e.g. 15s, 500ms or 1m30s", key, v)
	case t.Kind() == reflect.Bool:
		c.fail(n, "%s: %q is not true or false", key, v)
	case isInt && isNumber(v):
		c.fail(n, "%s: %q is out of range", key, v)
	case isInt || t.Kind() == reflect.Float64:
		c.fail(n, "%s: %q is not a number", key, v)
	default:
		c.fail(n, "%s: %q is not a %s", key, v, t)
	}
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// suggest names the known key nearest to key when it is near enough to be the one meant: a few letters off, or
// starting the same way (max_conns for max_connections).
func suggest(key string, known []string) string {
	best, bestDist, bestSame := "", 0, 0
	for _, k := range known {
		d, same := editDistance(key, k), commonPrefix(lastPart(key), lastPart(k))
		near := d <= max(2, len(key)/3) || same >= 4 && 2*same >= len(lastPart(key))
		if near && (best == "" || d < bestDist || d == bestDist && same > bestSame) {
			best, bestDist, bestSame = k, d, same
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

func lastPart(key string) string { return key[strings.LastIndexByte(key, '.')+1:] }

func commonPrefix(a, b string) int {
	n := 0
	for n < min(len(a), len(b)) && a[n] == b[n] {
		n++
	}
	return n
}
