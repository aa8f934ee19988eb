package sse

import (
	"net/http"
	"strings"
	"testing"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/rig"
)

// TestPresenceFramesOnlyToStreamsThatAsk: a stream opened with presence=1 gets the hub's presence frames, without an
// id and with users only when Authorize's viewer may see them; one opened without gets none, and the authorized
// user is who the hub counts. (Before: the stream had no way to ask, and the hub no identity to count.)
func TestPresenceFramesOnlyToStreamsThatAsk(t *testing.T) {
	overTransports(t, func(t *testing.T, tr transport) {
		e := newEnvOver(t, tr, hub.Config{}, Config{Authorize: func(r *http.Request, topics []string) (Access, error) {
			user := r.URL.Query().Get("user")
			return Access{Viewer: hub.Viewer{User: user, SeeUsers: func(string) bool { return user == "lead" }}}, nil
		}})
		lead := e.open(t, "topic=a&presence=1&user=lead", "")
		plain := e.open(t, "topic=a&presence=1&user=dev", "")
		// From 0-0: its start is fixed before the event below is stored (a fresh stream's start is the stream's end
		// when the hub reads it, which may come after the event).
		quiet := e.open(t, "topic=a&user=ops", "0-0")
		rig.Eventually(t, wait, "three watchers, named", func() bool {
			w := e.hub.Watchers("a", 10)
			return w.Count == 3 && strings.Join(w.Users, ",") == "dev,lead,ops"
		})
		e.hub.Notify("a", &hub.Event{Topic: "a", Type: hub.PresenceType, Data: []byte(`{"topic":"a","count":3,"users":["dev","lead","ops"],"hubs":1}`)},
			&hub.Event{Topic: "a", Type: hub.PresenceType, Data: []byte(`{"topic":"a","count":3,"hubs":1}`)})
		if f := lead.NextEvent(wait); f.Event != "presence" || f.HasID || !strings.Contains(f.Data, "users") {
			t.Errorf("lead got %+v, want a presence frame with users and no id", f)
		}
		if f := plain.NextEvent(wait); f.Event != "presence" || f.HasID || strings.Contains(f.Data, "users") {
			t.Errorf("dev got %+v, want a presence frame with the count only and no id", f)
		}
		e.hub.Broadcast(e.store.Add("a", 1)[0])
		if f := quiet.NextEvent(wait); f.Event == "presence" {
			t.Errorf("a stream that did not ask got %+v", f)
		}
	})
}
