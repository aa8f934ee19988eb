package pubsub

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/rig"
)

// TestSubscriberSweepRepairsALostMessageOnAQuietTopic: an entry stored without its live message (XADD with the
// hub's fields, no PUBLISH) on a topic that has gone quiet is delivered by the sweep, within Sweep and a tail check.
func TestSubscriberSweepRepairsALostMessageOnAQuietTopic(t *testing.T) {
	forBackends(t, func(t *testing.T, _ context.Context, b *backend) {
		const tick, sweep = 20 * time.Millisecond, 400 * time.Millisecond
		s, a := followFirst(t, b, SubscriberConfig{TailCheck: tick, Sweep: sweep})
		time.Sleep(10 * tick) // past the checks that follow traffic: the topic is quiet now
		lost := b.xadd(t, "t", "p", a, "t", "progress", "d", `{"n":"lost"}`)
		stored := time.Now()
		// Scheduling on a busy machine adds to the bound; the sweep's own share is sweep + tick.
		bound := sweep + tick + time.Second
		got := s.rec.waitN(t, 2, bound)
		took := time.Since(stored)
		checkChain(t, "a, then one stored without its live message", got, []string{a, lost})
		if took > bound {
			t.Errorf("the lost entry arrived %v after it was stored, want within %v (Sweep %v + TailCheck %v + 1s)", took, bound, sweep, tick)
		}
	})
}

// TestSubscriberQuietTopicsCostNoCommands: followed topics with no traffic cost no Redis command between sweeps,
// and a topic with traffic is checked again.
func TestSubscriberQuietTopicsCostNoCommands(t *testing.T) {
	b := realBackend(t) // INFO commandstats: miniredis has none
	const tick = 20 * time.Millisecond
	s := startSubscriber(t, b, SubscriberConfig{TailCheck: tick, Sweep: time.Hour}, numbered("q%d", 100)...)
	time.Sleep(10 * tick) // the checks every new subscription gets
	before := commandCalls(t, b, "xread", "xrevrange", "xrange")
	time.Sleep(25 * tick)
	after := commandCalls(t, b, "xread", "xrevrange", "xrange")
	for _, c := range []string{"xread", "xrevrange", "xrange"} {
		if d := after[c] - before[c]; d != 0 {
			t.Errorf("%s calls over 25 tail checks of 100 quiet topics = %d, want 0", c, d)
		}
	}
	b.publish(t, "q7", "", `{"n":"traffic"}`)
	s.rec.waitN(t, 1, within)
	rig.Eventually(t, within, "a tail check of the topic with traffic", func() bool {
		return commandCalls(t, b, "xread")["xread"] > after["xread"]
	})
}

// TestSubscriberSweepBatchesChecks: a sweep of many quiet topics is a few XREADs, not a command per topic.
func TestSubscriberSweepBatchesChecks(t *testing.T) {
	b := realBackend(t)
	const tick, sweep, topics = 50 * time.Millisecond, 200 * time.Millisecond, 300
	startSubscriber(t, b, SubscriberConfig{TailCheck: tick, Sweep: sweep}, numbered("w%d", topics)...)
	before := commandCalls(t, b, "xread", "xrevrange")
	began := time.Now()
	time.Sleep(5 * sweep) // every topic swept about five times
	after := commandCalls(t, b, "xread", "xrevrange")
	ticks := int64(time.Since(began)/tick) + 1
	if d := after["xread"] - before["xread"]; d == 0 || d > 2*ticks {
		t.Errorf("XREAD calls for %d topics over %v of sweeps every %v = %d, want 1 to %d (one or two per tail check)", topics, time.Since(began), sweep, d, 2*ticks)
	}
	if d := after["xrevrange"] - before["xrevrange"]; d != 0 {
		t.Errorf("XREVRANGE calls during sweeps = %d, want 0", d)
	}
}

// TestSubscriberBatchesSubscriptions: topics followed together are subscribed in a few SUBSCRIBE commands and left
// in a few UNSUBSCRIBEs, each still confirmed and baselined on its own.
func TestSubscriberBatchesSubscriptions(t *testing.T) {
	b := realBackend(t)
	const topics = 200
	s := startSubscriber(t, b, SubscriberConfig{TailCheck: time.Hour})
	before := commandCalls(t, b, "subscribe", "unsubscribe", "xrevrange")
	ready := make([]<-chan struct{}, topics)
	for i := range ready {
		ready[i] = s.Follow(fmt.Sprintf("j%d", i))
	}
	for i, r := range ready {
		select {
		case <-r:
		case <-time.After(within):
			t.Fatalf("Follow(j%d): not ready within %v", i, within)
		}
	}
	mid := commandCalls(t, b, "subscribe", "unsubscribe", "xrevrange")
	if d := mid["subscribe"] - before["subscribe"]; d < 1 || d > topics/10 {
		t.Errorf("SUBSCRIBE commands for %d topics followed at once = %d, want 1 to %d", topics, d, topics/10)
	}
	if d := mid["xrevrange"] - before["xrevrange"]; d != topics {
		t.Errorf("baseline reads (XREVRANGE) for %d topics = %d, want one each", topics, d)
	}
	for i := range topics {
		s.Unfollow(fmt.Sprintf("j%d", i))
	}
	ch := b.keys.Channel("j0")
	rig.Eventually(t, within, "every channel left", func() bool {
		n, err := b.rdb.PubSubNumSub(ctxFor(t), ch, b.keys.Channel(fmt.Sprintf("j%d", topics-1))).Result()
		return err == nil && n[ch] == 0 && len(s.channelSet()) == 0
	})
	end := commandCalls(t, b, "unsubscribe")
	if d := end["unsubscribe"] - mid["unsubscribe"]; d < 1 || d > topics/10 {
		t.Errorf("UNSUBSCRIBE commands for %d topics left at once = %d, want 1 to %d", topics, d, topics/10)
	}
	b.publish(t, "j3", "", `{"n":"while nobody follows"}`) // not broadcast: stored before the topic is followed again
	s.follow(t, "j3")                                      // joining again after the batch still works
	v := b.publish(t, "j3", "", `{"n":"again"}`)
	s.rec.waitN(t, 1, within)
	time.Sleep(50 * time.Millisecond) // anything else would show now
	checkChain(t, "j3 followed again", s.rec.got(), []string{v})
}

// TestSubscriberChurnKeepsEveryEvent: topics joined and left over and over, with events published on them all
// along, deliver each event of a followed topic once and in order.
func TestSubscriberChurnKeepsEveryEvent(t *testing.T) {
	forBackends(t, func(t *testing.T, _ context.Context, b *backend) {
		s := startSubscriber(t, b, SubscriberConfig{TailCheck: 20 * time.Millisecond}, "steady")
		var want []string
		followed := map[string]bool{}
		for round := range 20 {
			for i := range 10 { // ten topics gain or lose their only follower, without waiting
				topic := fmt.Sprintf("c%d", (round*3+i)%15)
				if followed[topic] {
					s.Unfollow(topic)
				} else {
					s.Follow(topic)
				}
				followed[topic] = !followed[topic]
			}
			want = append(want, b.publish(t, "steady", "", fmt.Sprintf(`{"round":%d}`, round)))
			b.publish(t, fmt.Sprintf("c%d", round%15), "", `{"churn":true}`)
		}
		rig.Eventually(t, within, "every event of the steady topic", func() bool {
			return len(onTopic(s.rec.got(), "steady")) >= len(want)
		})
		time.Sleep(100 * time.Millisecond) // a late duplicate would show now
		checkChain(t, "the steady topic through churn", onTopic(s.rec.got(), "steady"), want)
		for i := range 15 {
			topic := fmt.Sprintf("c%d", i)
			evs := onTopic(s.rec.got(), topic)
			for k := 1; k < len(evs); k++ {
				if !evs[k-1].ID.Less(evs[k].ID) {
					t.Errorf("%s through churn: broadcast %q, want each id once, growing", topic, describe(evs))
					break
				}
			}
		}
	})
}

// onTopic keeps the events of topic.
func onTopic(evs []*hub.Event, topic string) []*hub.Event {
	var out []*hub.Event
	for _, ev := range evs {
		if ev.Topic == topic {
			out = append(out, ev)
		}
	}
	return out
}

func (s *Subscriber) channelSet() map[string]struct{} {
	s.psMu.Lock()
	defer s.psMu.Unlock()
	return maps.Clone(s.channels)
}

// commandCalls reads how many times the real server ran each of cmds (INFO commandstats).
func commandCalls(t *testing.T, b *backend, cmds ...string) map[string]int64 {
	t.Helper()
	info, err := b.rdb.Info(ctxFor(t), "commandstats").Result()
	if err != nil {
		t.Fatalf("INFO commandstats: %v", err)
	}
	out := make(map[string]int64, len(cmds))
	for _, line := range strings.Split(info, "\n") {
		for _, c := range cmds {
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+c+":calls=")
			if !ok {
				continue
			}
			n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest+",", ',')], 10, 64)
			out[c] = n
		}
	}
	return out
}
