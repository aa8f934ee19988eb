package hub

import "slices"

// subBlock is the size of one block of a topic's subscriber set. A join or a leave copies one or two blocks and
// the list of blocks, never the whole set, so n clients joining one topic cost O(n) rather than O(n²): a reconnect
// storm of 20,000 clients to one topic would otherwise copy (and leave to the GC) gigabytes of pointers.
const subBlock = 256

// subSet is an immutable snapshot of a topic's subscribers: Broadcast reads it without a lock. Writers, under
// Hub.mu, build the next one from it and share every block they do not touch. Every block is full but the last.
type subSet struct {
	blocks [][]*Subscription
	n      int
	// at is where each subscriber sits (index into the blocks taken as one list). It belongs to the writers: each
	// new snapshot takes it over from the one before, which is never written again.
	at map[*Subscription]int
}

func newSubSet() *subSet { return &subSet{at: map[*Subscription]int{}} }

// with returns the set plus s.
func (set *subSet) with(s *Subscription) *subSet {
	next := &subSet{blocks: slices.Clone(set.blocks), n: set.n + 1, at: set.at}
	if last := len(next.blocks) - 1; last < 0 || len(next.blocks[last]) == subBlock {
		next.blocks = append(next.blocks, []*Subscription{s})
	} else {
		next.blocks[last] = append(slices.Clip(next.blocks[last]), s) // Clip: copy, never write a shared block
	}
	next.at[s] = set.n
	return next
}

// without returns the set minus s, and whether s was in it. The last subscriber takes s's place, so only the two
// blocks involved are copied; Broadcast's order is of no importance.
func (set *subSet) without(s *Subscription) (*subSet, bool) {
	i, ok := set.at[s]
	if !ok {
		return set, false
	}
	next := &subSet{blocks: slices.Clone(set.blocks), n: set.n - 1, at: set.at}
	last := set.n - 1
	if i != last {
		moved := set.blocks[last/subBlock][last%subBlock]
		b := slices.Clone(next.blocks[i/subBlock])
		b[i%subBlock] = moved
		next.blocks[i/subBlock] = b
		next.at[moved] = i
	}
	if lb := last / subBlock; last%subBlock == 0 {
		next.blocks = next.blocks[:lb]
	} else {
		next.blocks[lb] = slices.Clone(next.blocks[lb][:last%subBlock])
	}
	delete(next.at, s)
	return next, true
}

// each calls f for every subscriber.
func (set *subSet) each(f func(*Subscription)) {
	for _, b := range set.blocks {
		for _, s := range b {
			f(s)
		}
	}
}
