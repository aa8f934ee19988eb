package workflow

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// The event types the hub judges workflows from. Any other type (a log line, a metric) is shown, stored and
// replayed like every event, but says nothing of a workflow's health, whatever its data holds.
const (
	ProgressType = "progress" // a workflow's status, eta_s and the data its notifications carry
	LockType     = "lock"     // the lease's transitions: who holds which key, with which fence
)

// DecodeExact decodes the JSON object data into v, a pointer to a struct, reading only the members whose names are
// exactly a field's JSON name. encoding/json matches names regardless of case, so {"status":"succeeded",
// "Status":"failed"} would decode as failed; the publish script, the console and every other reader of the data
// read "status" alone, and so does the hub's judgement of it. Of members named twice the last counts, as everywhere
// else.
func DecodeExact(data []byte, v any) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return err
	}
	names, err := jsonNames(reflect.TypeOf(v))
	if err != nil {
		return err
	}
	for k := range members {
		if !names[k] {
			delete(members, k)
		}
	}
	exact, err := json.Marshal(members)
	if err != nil {
		return err
	}
	return json.Unmarshal(exact, v)
}

var namesByType sync.Map // reflect.Type -> map[string]bool

// jsonNames returns the JSON names of the fields of the struct t points to.
func jsonNames(t reflect.Type) (map[string]bool, error) {
	if cached, ok := namesByType.Load(t); ok {
		return cached.(map[string]bool), nil
	}
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("decode exact: %v is not a pointer to a struct", t)
	}
	names := map[string]bool{}
	for f := range t.Elem().Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		names[name] = true
	}
	namesByType.Store(t, names)
	return names, nil
}
