package bench

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/syncverse/hub/internal/eventschema"
)

// TestTopicsScenario is a CI-sized topics scenario on the real binary and a real redis-server: 600 clients over 300
// topics, 600 events/s for 3 s, 50 churn cycles a second. Every client must get every event of its topic once and
// in order, every churn cycle must succeed, and the followed topics, quiet during the idle window, must cost the
// live feed well under one Redis command per topic per tail check (before the sweep it was exactly one).
func TestTopicsScenario(t *testing.T) {
	bin := scenarioHub(t, "builds the hub and runs it under load")
	const tick = 200 * time.Millisecond
	args := []string{"--scenario", "topics", "--hub-bin", bin, "--json", "--conns", "600", "--topics", "300",
		"--rate", "600", "--duration", "3s", "--hold", "3s", "--settle", "1s", "--churn", "50", "--drain", "20s",
		"--hub-env", "HUB_REDIS_TAIL_CHECK=" + tick.String()}
	var res Result
	_, err := runJSON(t, 2*time.Minute, args, &res, func() bool { return res.Topics != nil && res.Topics.Idle != nil })
	tr := res.Topics
	t.Logf("deliveries %d (%.0f/s), %v; %.1f µs hub CPU per delivery; idle live-feed commands %.2f/s; churn %+v",
		res.Deliveries, res.DeliveriesPS, res.Latency, tr.CPUPerDeliveryUs, tr.Idle.SubscriberPS, tr.Churn)
	if err != nil || !res.Check.ok() {
		t.Errorf("hub bench --scenario topics: %v, check %+v; want every event once and in order at every client", err, res.Check)
	}
	if want := 600 * tr.EventsPerTopic; res.Deliveries != want || res.Published != 300*tr.EventsPerTopic {
		t.Errorf("deliveries = %d of %d published, want %d (2 clients × %d events × 300 topics)", res.Deliveries, res.Published, want, tr.EventsPerTopic)
	}
	if tr.Churn == nil || tr.Churn.Cycles < 50 || tr.Churn.Check != (Check{}) {
		t.Errorf("churn = %+v, want at least 50 cycles (1 s of 50/s) and none failed", tr.Churn)
	}
	perTick := tr.Idle.SubscriberPS * tick.Seconds() / float64(tr.Topics)
	if perTick > 0.25 {
		t.Errorf("idle: %.2f live-feed commands per topic per tail check (%.1f/s for %d topics), want ≤ 0.25", perTick, tr.Idle.SubscriberPS, tr.Topics)
	}
}

// TestTopicsScenarioOnTheFloor: --target floor runs the same load on the floor server, a child process of its own
// whose CPU the result reports, and every client gets every event of its topic once and in order there too.
func TestTopicsScenarioOnTheFloor(t *testing.T) {
	scenarioHub(t, "builds the bench and runs the floor under load") // skips without redis-server
	bench := benchBinary(t)
	args := []string{"--scenario", "topics", "--target", "floor", "--bench-bin", bench, "--json", "--conns", "400",
		"--topics", "200", "--rate", "400", "--duration", "2s", "--hold", "2s", "--settle", "500ms", "--churn", "0",
		"--drain", "20s"}
	var res Result
	_, err := runJSON(t, 2*time.Minute, args, &res, func() bool { return res.Topics != nil })
	if err != nil || !res.Check.ok() || res.Deliveries != 400*res.Topics.EventsPerTopic || res.Target != "floor" {
		t.Fatalf("on the floor: %v, target %q, check %+v, deliveries %d; want the floor, every event once and in order at every client",
			err, res.Target, res.Check, res.Deliveries)
	}
	if res.Topics.CPUPerDeliveryUs <= 0 {
		t.Errorf("floor CPU per delivery = %v, want the floor process's CPU measured", res.Topics.CPUPerDeliveryUs)
	}
	var bad bytes.Buffer
	err = command(t.Context(), flag.NewFlagSet("hub bench", flag.ContinueOnError), []string{"--target", "floor"}, &bad, &bad, false)
	if err == nil {
		t.Errorf("--target floor with the fanout scenario: no error, want a usage error")
	}
}

// TestProgressPayloadIsValidProgress: the topics scenario's events are valid progress data, of the size asked, which
// the bench's clients still read (publisher, sequence, send time).
func TestProgressPayloadIsValidProgress(t *testing.T) {
	set, err := eventschema.Compile(os.DirFS("../../docs/schemas"))
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{0, 64, 128, 1000} {
		p := progressPayload(3, 7, 1765000000000000000, size)
		if err := set.Validate("progress", p); err != nil || !json.Valid(p) {
			t.Errorf("progressPayload(size %d) = %s: %v, want valid progress data", size, p, err)
		}
		if size >= 64 && len(p) != size {
			t.Errorf("progressPayload(size %d) is %d bytes", size, len(p))
		}
		if intAfter(p, `"p":`) != 3 || intAfter(p, `"s":`) != 7 || intAfter(p, `"t":`) != 1765000000000000000 {
			t.Errorf("progressPayload = %s: the client reads p %d, s %d, t %d", p, intAfter(p, `"p":`), intAfter(p, `"s":`), intAfter(p, `"t":`))
		}
	}
}
