package docs_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/config"
)

// docs/security.md gathers the keys of auth, limits and CORS in one table with their variables and defaults, for the
// reader of that page; config.yaml is the reference (TestConfigYAMLDocumentsTheDefaults holds it to the code), so
// each row is held to it here: the variable is the key's, the default is config.yaml's.
func TestDocsSecurityConfigTableMatchesConfigYAML(t *testing.T) {
	var ref map[string]any
	if err := yaml.Unmarshal(hubtest.ReadFile(t, "config.yaml"), &ref); err != nil {
		t.Fatal(err)
	}
	rows := securityConfigRows(t)
	if len(rows) < 20 {
		t.Fatalf("docs/security.md's Configuration table has %d rows, want the auth, limits and CORS keys", len(rows))
	}
	for _, row := range rows {
		keys, envs, defaults := splitCell(row[0]), splitCell(row[1]), splitCell(row[2])
		for i, key := range keys {
			want := config.EnvName(key)
			if envs[0] != "(config.yaml only)" && (i >= len(envs) || envs[i] != want) {
				t.Errorf("docs/security.md: %s's variable is %v, want %s", key, envs, want)
			}
			v, ok := yamlPath(ref, key)
			if !ok {
				t.Errorf("docs/security.md names %s, which config.yaml does not have", key)
				continue
			}
			doc := ""
			if i < len(defaults) {
				doc = defaults[i]
			}
			if !sameDefault(doc, v) {
				t.Errorf("docs/security.md: %s defaults to %q, config.yaml says %v", key, doc, v)
			}
		}
	}
}

// securityConfigRows reads the cells of the table under "## Configuration" in docs/security.md.
func securityConfigRows(t *testing.T) [][]string {
	t.Helper()
	_, section, ok := strings.Cut(string(hubtest.ReadFile(t, "docs/security.md")), "\n## Configuration\n")
	if !ok {
		t.Fatal("docs/security.md has no Configuration section")
	}
	var rows [][]string
	for _, line := range strings.Split(section, "\n")[1:] {
		if !strings.HasPrefix(line, "|") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) < 3 || cells[0] == "key" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		rows = append(rows, cells)
	}
	return rows
}

// splitCell reads "`a`, `b`" as [a b].
func splitCell(cell string) []string {
	var out []string
	for _, part := range strings.Split(cell, ", ") {
		out = append(out, strings.Trim(part, "`"))
	}
	return out
}

func yamlPath(m map[string]any, key string) (any, bool) {
	var v any = m
	for _, part := range strings.Split(key, ".") {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[part]; !ok {
			return nil, false
		}
	}
	return v, true
}

// sameDefault compares the table's words for a default with config.yaml's value: blank for an empty string, "unset"
// for null, "none" for an empty list, durations by their length.
func sameDefault(doc string, v any) bool {
	switch v := v.(type) {
	case nil:
		return doc == "unset" || doc == ""
	case string:
		if d, err := time.ParseDuration(v); err == nil {
			dd, err := time.ParseDuration(doc)
			return err == nil && d == dd
		}
		return doc == v
	case []any:
		return len(v) == 0 && doc == "none"
	case map[string]any:
		return len(v) == 0 && doc == "{}"
	default:
		return doc == fmt.Sprint(v)
	}
}
