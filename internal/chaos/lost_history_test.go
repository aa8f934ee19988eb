package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/syncverse/hub/hub"
)

// verifyLossy is the check of a failover that lost acknowledged events with the master: the ids of events that
// answered 202 but are not stored ("vanished") may have reached clients live before the failover; every stored event
// must still reach every client exactly once and in order, and a client resuming from a vanished id must get every
// stored event after it. It fails the test unless the failover lost something (else the scenario proves nothing).
func (r *failoverRig) verifyLossy(f *Fleet, truth map[string][]hub.ID, load *keyedLoad, stored map[string]int) (Tally, string) {
	t := r.t
	vanished := map[string]map[hub.ID]bool{} // topic → ids
	load.mu.Lock()
	for key, id := range load.ids {
		n := stored[key]
		if n > 1 {
			t.Errorf("key %s answered 202 and is stored %d times, want at most once", key, n)
		}
		if parsed, err := hub.ParseID(id); err == nil && n == 0 {
			topic := load.topicOf[key]
			if vanished[topic] == nil {
				vanished[topic] = map[hub.ID]bool{}
			}
			vanished[topic][parsed] = true
		}
	}
	load.mu.Unlock()
	lost, seen := 0, 0
	for _, ids := range vanished {
		lost += len(ids)
	}
	if lost == 0 {
		t.Errorf("no acknowledged event was lost: the replica was not behind, and the scenario shows nothing")
	}
	var tally Tally
	reasons := map[string]int{}
	for i, c := range f.Clients {
		for _, topic := range c.Topics() {
			var kept []Got
			for _, g := range c.Received(topic) {
				if g.Reset {
					reasons[g.Reason]++
					if len(vanished[topic]) == 0 {
						t.Errorf("client %d topic %s: reset %q where no history was lost", i, topic, g.Reason)
					} else if g.Reason != hub.ResetLost {
						t.Errorf("client %d topic %s: reset %q, want %s: its position vanished, nothing was trimmed", i, topic, g.Reason, hub.ResetLost)
					}
				}
				if !g.Reset && vanished[topic][g.ID] {
					seen++
					continue
				}
				kept = append(kept, g)
			}
			tl := Check(truth[topic], hub.ID{}, kept)
			if !tl.Clean() {
				t.Errorf("client %d topic %s, vanished events set aside: %v", i, topic, tl)
			}
			tally = tally.Add(tl)
		}
	}
	resumed := r.resumeFromVanished(truth, vanished)
	return tally, fmt.Sprintf("; %d acknowledged events lost with the master, %d deliveries of them before the failover; resets at the live clients by reason %v; %s",
		lost, seen, reasons, resumed)
}

// resumeFromVanished opens one stream per topic from its newest vanished id and checks it gets every stored event
// after that id, in order (a reset before them is allowed and counted by reason, a skip of a stored event is not).
func (r *failoverRig) resumeFromVanished(truth map[string][]hub.ID, vanished map[string]map[hub.ID]bool) string {
	t := r.t
	n, reasons := 0, map[string]int{}
	for topic, ids := range vanished {
		var from hub.ID
		for id := range ids {
			if from.Less(id) {
				from = id
			}
		}
		c := NewClient(ClientConfig{URLs: []string{r.hubs[0].URL}, Topics: []string{topic}, LastEventID: from.String()})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c.Run(ctx)
		f := &Fleet{Clients: []*Client{c}}
		if _, err := f.WaitCaughtUp(newestOf(map[string][]hub.ID{topic: truth[topic]}), 20*time.Second); err != nil {
			t.Errorf("a client resuming %s from the vanished id %v: %v", topic, from, err)
		}
		c.Stop()
		cancel()
		tl := Check(truth[topic], from, c.Received(topic))
		if !tl.Clean() {
			t.Errorf("a client resuming %s from the vanished id %v: %v", topic, from, tl)
		}
		n++
		for _, g := range c.Received(topic) {
			if g.Reset {
				reasons[g.Reason]++
				if g.Reason != hub.ResetLost {
					t.Errorf("a client resuming %s from the vanished id %v: reset %q, want %s", topic, from, g.Reason, hub.ResetLost)
				}
			}
		}
	}
	return fmt.Sprintf("%d clients resumed from a vanished id got every stored event after it (resets by reason %v)", n, reasons)
}
