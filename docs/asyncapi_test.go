package docs_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/eventschema"
	"github.com/syncverse/hub/pubsub"
)

const asyncAPIFile = "docs/asyncapi.yaml"

// loadAsyncAPI reads docs/asyncapi.yaml as JSON would hold it (numbers as json.Number), so schemas can check it.
func loadAsyncAPI(t *testing.T) map[string]any {
	t.Helper()
	b := hubtest.ReadFile(t, asyncAPIFile)
	var y any
	if err := yaml.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", asyncAPIFile, err)
	}
	j, err := json.Marshal(y)
	if err != nil {
		t.Fatalf("%s as JSON: %v", asyncAPIFile, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		t.Fatalf("%s is not a mapping", asyncAPIFile)
	}
	return m
}

// at follows a JSON pointer's parts through maps.
func at(v any, parts ...string) any {
	for _, p := range parts {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func mapAt(v any, parts ...string) map[string]any {
	m, _ := at(v, parts...).(map[string]any)
	return m
}

// local resolves an in-document reference "#/a/b".
func local(t *testing.T, doc map[string]any, ref string) map[string]any {
	t.Helper()
	p, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		t.Fatalf("%s: %q is not a reference within the document", asyncAPIFile, ref)
	}
	m := mapAt(doc, strings.Split(p, "/")...)
	if m == nil {
		t.Fatalf("%s: %s resolves to nothing", asyncAPIFile, ref)
	}
	return m
}

func refOf(v any) string { s, _ := at(v, "$ref").(string); return s }

// The document is AsyncAPI 3.0: channels each with an address and messages taken from components.messages, and
// operations that send or receive on a channel with messages of that channel only (a reply too); every message
// component is some channel's.
func TestAsyncAPIIsAsyncAPI3(t *testing.T) {
	doc := loadAsyncAPI(t)
	if v := doc["asyncapi"]; v != "3.0.0" {
		t.Errorf("asyncapi: %v, want 3.0.0", v)
	}
	if at(doc, "info", "title") == nil || at(doc, "info", "version") == nil {
		t.Errorf("info lacks title or version: %v", doc["info"])
	}
	channels, ops, msgs := mapAt(doc, "channels"), mapAt(doc, "operations"), mapAt(doc, "components", "messages")
	if len(channels) == 0 || len(ops) == 0 || len(msgs) == 0 {
		t.Fatalf("%d channels, %d operations, %d components.messages; want some of each", len(channels), len(ops), len(msgs))
	}
	used := map[string]bool{}
	for name, ch := range channels {
		if _, ok := ch.(map[string]any)["address"]; !ok {
			t.Errorf("channel %s has no address (null for one that is not an address)", name)
		}
		if len(mapAt(ch, "messages")) == 0 {
			t.Errorf("channel %s has no messages", name)
		}
		for _, m := range mapAt(ch, "messages") {
			ref := refOf(m)
			if !strings.HasPrefix(ref, "#/components/messages/") {
				t.Errorf("channel %s: message %v is not a components.messages reference", name, m)
				continue
			}
			local(t, doc, ref)
			used[strings.TrimPrefix(ref, "#/components/messages/")] = true
		}
	}
	for name := range msgs {
		if !used[name] {
			t.Errorf("components.messages.%s belongs to no channel", name)
		}
	}
	for name, op := range ops {
		if a := at(op, "action"); a != "send" && a != "receive" {
			t.Errorf("operation %s: action %v, want send or receive", name, a)
		}
		checkOpMessages(t, doc, "operation "+name, op)
		if reply := mapAt(op, "reply"); reply != nil {
			checkOpMessages(t, doc, "operation "+name+" reply", reply)
		}
	}
}

// checkOpMessages checks that an operation's (or a reply's) messages are messages of its channel.
func checkOpMessages(t *testing.T, doc map[string]any, what string, op any) {
	t.Helper()
	ch := refOf(at(op, "channel"))
	if !strings.HasPrefix(ch, "#/channels/") {
		t.Errorf("%s: channel %v is not a channels reference", what, at(op, "channel"))
		return
	}
	local(t, doc, ch)
	list, _ := at(op, "messages").([]any)
	if len(list) == 0 {
		t.Errorf("%s: no messages", what)
	}
	for _, m := range list {
		if ref := refOf(m); !strings.HasPrefix(ref, ch+"/messages/") {
			t.Errorf("%s: message %s is not one of %s's", what, ref, ch)
		} else {
			local(t, doc, ref)
		}
	}
}

// frameEvent is the `event:` an SSE message of the document sends: the const of its headers' event property, in
// the headers or in one of their allOf parts.
func frameEvent(headers map[string]any) (string, bool) {
	parts := []any{headers}
	if all, ok := headers["allOf"].([]any); ok {
		parts = append(parts, all...)
	}
	for _, p := range parts {
		if c, ok := at(p, "properties", "event", "const").(string); ok {
			return c, true
		}
	}
	return "", false
}

// Every event type the hub sends or knows has its message on /events: the types with a schema (whose payload is
// that docs/schemas file), the hub's reserved ones, the default type, and a message for every other type that
// excludes exactly those; the retry hint, the heartbeat comment and the id field are there too.
func TestAsyncAPIKnowsEveryEventType(t *testing.T) {
	doc := loadAsyncAPI(t)
	sent, schemaPayload := map[string]bool{}, map[string]bool{}
	var frames []string
	var others []any
	for _, m := range mapAt(doc, "channels", "events", "messages") {
		msg := local(t, doc, refOf(m))
		headers := mapAt(msg, "headers")
		if ev, ok := frameEvent(headers); ok {
			sent[ev] = true
			schemaPayload[ev] = schemaPayload[ev] || refOf(msg["payload"]) == "schemas/"+ev+".json"
		} else if all, ok := at(headers, "allOf").([]any); ok && len(all) == 2 {
			others, _ = at(all[1], "properties", "event", "not", "enum").([]any)
		}
		parts := []any{headers}
		all, _ := headers["allOf"].([]any)
		for _, p := range all {
			if ref := refOf(p); ref != "" {
				p = local(t, doc, ref)
			}
			parts = append(parts, p)
		}
		for _, p := range parts {
			for f := range mapAt(p, "properties") {
				frames = append(frames, f)
			}
		}
	}
	known := slices.Concat(eventschema.Types, pubsub.ReservedTypes, []string{hub.DefaultType})
	for _, typ := range known {
		if !sent[typ] {
			t.Errorf("%s has no /events message for event type %s", asyncAPIFile, typ)
		}
	}
	for _, typ := range eventschema.Types {
		if !schemaPayload[typ] {
			t.Errorf("no /events message for %s has the payload $ref schemas/%s.json", typ, typ)
		}
	}
	slices.Sort(known)
	known = slices.Compact(known)
	var excluded []string
	for _, o := range others {
		excluded = append(excluded, fmt.Sprint(o))
	}
	slices.Sort(excluded)
	if !slices.Equal(excluded, known) {
		t.Errorf("the message for other types excludes %v, want exactly the known types %v", excluded, known)
	}
	for _, f := range []string{"retry", "comment", "id"} {
		if !slices.Contains(frames, f) {
			t.Errorf("no /events message has a %s field", f)
		}
	}
}

// The Redis channels' addresses are pubsub's key and channel names.
func TestAsyncAPIRedisAddressesAreThePubsubKeys(t *testing.T) {
	doc := loadAsyncAPI(t)
	keys := pubsub.Keys{Prefix: "hub"}
	for ch, want := range map[string]string{"stream": keys.Stream("t"), "live": keys.Channel("t"), "state": keys.State("t")} {
		addr, _ := at(doc, "channels", ch, "address").(string)
		addr = strings.NewReplacer("{prefix}", "hub", "{taggedTopic}", "{t}").Replace(addr)
		if addr != want {
			t.Errorf("channel %s: address for prefix hub and topic t is %q, want %q", ch, addr, want)
		}
	}
}

// Every $ref resolves: within the document, or to a file beside it (docs/schemas/…) and a place in that file, and
// so on through that file's own references.
func TestAsyncAPIRefsResolve(t *testing.T) {
	doc := loadAsyncAPI(t)
	n := 0
	files := map[string]any{asyncAPIFile: doc}
	var walk func(file string, v any)
	walk = func(file string, v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(file, e)
			}
		case map[string]any:
			for k, e := range x {
				if ref, ok := e.(string); ok && k == "$ref" {
					n++
					target, name, first := resolveRef(t, files, file, ref)
					if target == nil {
						t.Errorf("%s: $ref %q resolves to nothing", file, ref)
					} else if first { // a file read for the first time: its own references, once
						walk(name, files[name])
					}
					continue
				}
				walk(file, e)
			}
		}
	}
	walk(asyncAPIFile, doc)
	if n < 40 {
		t.Errorf("found %d $refs in %s, fewer than it holds: the walk is broken", n, asyncAPIFile)
	}
	for _, typ := range eventschema.Types {
		if files[filepath.Join("docs", "schemas", typ+".json")] == nil {
			t.Errorf("no $ref reaches docs/schemas/%s.json", typ)
		}
	}
}

// resolveRef finds what ref, written in file, points at, in the file it names (relative to file's directory; file
// itself for "#/…"); first says that file was read just now.
func resolveRef(t *testing.T, files map[string]any, file, ref string) (target any, name string, first bool) {
	t.Helper()
	path, pointer, _ := strings.Cut(ref, "#")
	name = file
	if path != "" {
		name = filepath.Join(filepath.Dir(file), path)
	}
	root, seen := files[name]
	if !seen {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Errorf("%s: $ref %q: %v", file, ref, err)
			return nil, name, false
		}
		if root, err = jsonschema.UnmarshalJSON(bytes.NewReader(b)); err != nil {
			t.Errorf("%s: $ref %q: %s is not JSON: %v", file, ref, name, err)
			return nil, name, false
		}
		files[name] = root
	}
	target = root
	if p := strings.TrimPrefix(pointer, "/"); p != "" {
		target = at(root, strings.Split(p, "/")...)
	}
	return target, name, !seen
}

// asyncAPISchemas compiles the document's schemas at their places in it (draft-07, AsyncAPI's format; the
// docs/schemas files by their own $schema).
func asyncAPISchemas(t *testing.T, doc map[string]any) func(pointer string) *jsonschema.Schema {
	t.Helper()
	abs, err := filepath.Abs(asyncAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	base := "file://" + filepath.ToSlash(abs)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.AssertFormat()
	if err := c.AddResource(base, doc); err != nil {
		t.Fatal(err)
	}
	return func(pointer string) *jsonschema.Schema {
		t.Helper()
		s, err := c.Compile(base + "#" + pointer)
		if err != nil {
			t.Fatalf("compile %s#%s: %v", asyncAPIFile, pointer, err)
		}
		return s
	}
}

// jsonValue is v as the validator reads JSON.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Each message has examples, and each example's headers and payload match the message's schemas, the docs/schemas
// files included; what the hub itself writes (a reset, an envelope) matches too, and the schemas are not so loose
// that a typo or a made-up reason passes.
func TestAsyncAPIExamplesMatchTheirSchemas(t *testing.T) {
	doc := loadAsyncAPI(t)
	compile := asyncAPISchemas(t, doc)
	for name, m := range mapAt(doc, "components", "messages") {
		examples, _ := at(m, "examples").([]any)
		if len(examples) == 0 {
			t.Errorf("components.messages.%s has no example", name)
		}
		for i, ex := range examples {
			checked := 0
			for _, part := range []string{"headers", "payload"} {
				v, ok := ex.(map[string]any)[part]
				if !ok {
					continue
				}
				if at(m, part) == nil {
					t.Errorf("components.messages.%s example %d has %s, the message none", name, i, part)
					continue
				}
				checked++
				if err := compile("/components/messages/" + name + "/" + part).Validate(v); err != nil {
					t.Errorf("components.messages.%s example %d: %s %v: %v", name, i, part, v, err)
				}
			}
			if checked == 0 {
				t.Errorf("components.messages.%s example %d has neither headers nor payload", name, i)
			}
		}
	}
	env, _ := json.Marshal(pubsub.Envelope{ID: "1732870000000-0", Prev: "0-0", Type: "lock", Data: json.RawMessage(`{"key":"db"}`)})
	for _, c := range []struct {
		pointer, data string
		ok            bool
	}{
		{"/components/messages/reset/payload", string(hub.NewReset("project.42", hub.ResetTruncated, hub.ID{Ms: 1732870000000}).Data), true},
		{"/components/messages/reset/payload", string(hub.NewReset("project.42", hub.ResetReplayLimit, hub.ID{}).Data), true},
		{"/components/messages/envelope/payload", string(env), true},
		{"/components/messages/reset/payload", `{"topic":"project.42","reason":"gone","oldest":null}`, false},
		{"/components/messages/progress/payload", `{"workflow":"wf-1","progress":40}`, false},
		{"/components/messages/progress/headers", `{"event":"progress"}`, false},
		{"/components/messages/reset/headers", `{"event":"reset","id":"1-0"}`, false},
		{"/components/messages/heartbeat/headers", `{"comment":"hb"}`, false},
		{"/components/messages/scriptCall/payload", `{"keys":["hub:{t}:events"],"argv":[]}`, false},
	} {
		err := compile(c.pointer).Validate(jsonValue(t, json.RawMessage(c.data)))
		if (err == nil) != c.ok {
			t.Errorf("%s#%s on %s: %v, want valid %v", asyncAPIFile, c.pointer, c.data, err, c.ok)
		}
	}
}
