package chaos

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/pubsub"
)

// Scenario 10: an agent publishes through a path that loses the script's reply: Redis ran the script, the agent
// saw an error and retried. Publishing is at least once, so the stream and every client hold the event twice, with
// two ids; the agent's idempotency_key in data is what lets the console show it once. The console applies the rule
// (clients/js/hubclient.js: one key per topic, workflow and idempotency_key), and its browser test shows it; here the
// stream side is shown: both copies arrive, in order, carrying the same key. Then the same loss for a publish with
// an idempotency key (issue 21): the Publisher retries it itself and the script answers the stored id, so it is
// stored and delivered once.
func TestChaos10PublisherRetry(t *testing.T) {
	r, h := newRigWithHub(t)
	px, err := NewProxy(r.redis.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	topic := "s10"
	tr, ctx := clientsFor(t, time.Minute)
	fleet := runConnected(ctx, t, NewFleet(1, func(int) ClientConfig {
		return ClientConfig{URLs: []string{h.URL}, Topics: []string{topic}, LastEventID: "0-0", Transport: tr, KeepData: true}
	}), 10*time.Second)
	c := fleet.Clients[0]

	// The agent's own client: no silent retries by the library, so the retry below is the agent's.
	agent := redis.NewClient(&redis.Options{Addr: px.Addr, MaxRetries: -1, ReadTimeout: time.Second})
	defer agent.Close()
	pub := pubsub.NewPublisher(agent, pubsub.PublisherConfig{Prefix: r.prefix})
	publish := func(step int, loseReply bool) (attempts int) {
		data := fmt.Appendf(nil, `{"workflow":"wf-10","step":"s%d","idempotency_key":"wf-10/s%d"}`, step, step)
		for attempts = 1; attempts <= 5; attempts++ {
			if loseReply && attempts == 1 {
				px.LoseReplies()
			}
			if _, err := pub.Publish(ctx, topic, "progress", data); err == nil {
				return attempts
			}
		}
		t.Fatalf("publish step %d: 5 attempts failed", step)
		return 0
	}
	if _, err := agent.Ping(ctx).Result(); err != nil { // the connection exists before the reply is lost
		t.Fatal(err)
	}
	tries := []int{publish(1, false), publish(2, true), publish(3, false)}
	if tries[1] != 2 {
		t.Errorf("the publish whose reply was lost took %d attempts, want 2 (one lost reply, one retry)", tries[1])
	}
	// With an idempotency key the Publisher retries by itself, and the script answers the stored event's id: one entry.
	px.LoseReplies()
	keyed, err := pub.PublishMessage(ctx, pubsub.Message{Topic: topic, Data: []byte(`{"workflow":"wf-10","step":"s4"}`), IdempotencyKey: "wf-10/s4"})
	if err != nil || !keyed.Duplicate || keyed.Retries != 1 {
		t.Errorf("keyed publish with a lost reply = %+v, %v; want the stored id, answered as a duplicate after 1 retry", keyed, err)
	}
	truth := r.truths([]string{topic})
	if _, err := fleet.WaitCaughtUp(newestOf(truth), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	tally := verify(t, fleet, truth)

	shown, keys := 0, map[string]int{}
	for _, g := range c.Received(topic) {
		var d struct {
			Workflow string `json:"workflow"`
			Key      string `json:"idempotency_key"`
		}
		if err := json.Unmarshal(g.Data, &d); err != nil {
			t.Fatalf("event %v data %q: %v", g.ID, g.Data, err)
		}
		k := topic + "\x00" + d.Workflow + "\x00" + d.Key // the console's de-duplication key
		if keys[k]++; keys[k] == 1 {
			shown++
		}
	}
	if len(truth[topic]) != 5 || keys[topic+"\x00wf-10\x00wf-10/s2"] != 2 || shown != 4 {
		t.Errorf("stream holds %d events, key wf-10/s2 received %d times, %d shown after de-duplication; want 5, 2 (at least once), 4",
			len(truth[topic]), keys[topic+"\x00wf-10\x00wf-10/s2"], shown)
	}
	record(t, Row{Scenario: "10 publisher retry, reply lost", Published: len(truth[topic]), Reconnects: fleet.Reconnects(),
		Note: fmt.Sprintf("3 publishes, one reply lost and retried by the agent: same idempotency_key in data twice; then one with an Idempotency key, reply lost, retried by the Publisher: stored once; %d stream entries, %d shown by the console's rule", len(truth[topic]), shown)}.Fill(tally))
}
