package hub

import (
	"math/rand/v2"
	"testing"
)

// TestSubSetMatchesModel joins and leaves at random across several blocks and checks every snapshot against a
// plain set, and that no snapshot already handed out changes afterwards.
func TestSubSetMatchesModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pool := make([]*Subscription, 3*subBlock+7)
	for i := range pool {
		pool[i] = &Subscription{}
	}
	set := newSubSet()
	model := map[*Subscription]bool{}
	type frozen struct {
		set  *subSet
		subs []*Subscription
	}
	var snaps []frozen
	for step := range 20000 {
		s := pool[r.IntN(len(pool))]
		if model[s] {
			next, ok := set.without(s)
			if !ok {
				t.Fatalf("step %d: without(member) reported it absent", step)
			}
			set = next
			delete(model, s)
		} else {
			if _, ok := set.without(s); ok {
				t.Fatalf("step %d: without(non-member) reported it present", step)
			}
			set = set.with(s)
			model[s] = true
		}
		var got []*Subscription
		set.each(func(s *Subscription) { got = append(got, s) })
		if len(got) != len(model) || set.n != len(model) {
			t.Fatalf("step %d: set holds %d (n=%d), want %d", step, len(got), set.n, len(model))
		}
		for _, s := range got {
			if !model[s] {
				t.Fatalf("step %d: set holds a subscriber that left", step)
			}
		}
		for i, b := range set.blocks[:max(len(set.blocks)-1, 0)] {
			if len(b) != subBlock {
				t.Fatalf("step %d: block %d of %d holds %d, want %d", step, i, len(set.blocks), len(b), subBlock)
			}
		}
		if step%1000 == 0 {
			snaps = append(snaps, frozen{set: set, subs: got})
		}
	}
	for i, f := range snaps {
		k := 0
		f.set.each(func(s *Subscription) {
			if k >= len(f.subs) || f.subs[k] != s {
				t.Fatalf("snapshot %d changed after it was published", i)
			}
			k++
		})
	}
}
