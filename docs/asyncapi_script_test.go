package docs_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// The publish script's example calls run as written against a real Redis: the reply, the stored entry, the state
// hash and the envelope heard on the live channel each match their message in the document.
func TestAsyncAPIScriptExamplesRun(t *testing.T) {
	doc := loadAsyncAPI(t)
	compile := asyncAPISchemas(t, doc)
	rdb := rig.StartRedis(t).Client()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	examples, _ := at(doc, "components", "messages", "scriptCall", "examples").([]any)
	for i, ex := range examples {
		var call struct{ Keys, Argv []string }
		if b, _ := json.Marshal(at(ex, "payload")); json.Unmarshal(b, &call) != nil || len(call.Keys) < 2 || len(call.Argv) < 6 {
			t.Fatalf("scriptCall example %d: %v is not keys and argv", i, at(ex, "payload"))
		}
		live := rdb.Subscribe(ctx, call.Argv[0])
		if _, err := live.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		args := make([]any, len(call.Argv))
		for j, a := range call.Argv {
			args[j] = a
		}
		reply, err := rdb.Eval(ctx, pubsub.PublishScript, call.Keys, args...).Result()
		if err != nil {
			t.Fatalf("EVAL of scriptCall example %d: %v", i, err)
		}
		msg, err := live.ReceiveMessage(ctx)
		_ = live.Close()
		if err != nil {
			t.Fatalf("scriptCall example %d: nothing heard on %s: %v", i, call.Argv[0], err)
		}
		entries, err := rdb.XRange(ctx, call.Keys[0], "-", "+").Result()
		if err != nil || len(entries) != i+1 {
			t.Fatalf("XRANGE %s after example %d: %d entries, %v", call.Keys[0], i, len(entries), err)
		}
		state, err := rdb.HGetAll(ctx, call.Keys[1]).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			message string
			value   any
		}{
			{"scriptReply", reply},
			{"envelope", json.RawMessage(msg.Payload)},
			{"streamEntry", entries[i].Values},
			{"stateHash", state},
		} {
			if err := compile("/components/messages/" + c.message + "/payload").Validate(jsonValue(t, c.value)); err != nil {
				t.Errorf("scriptCall example %d: %s %v does not match components.messages.%s: %v", i, c.message, c.value, c.message, err)
			}
		}
	}
}
