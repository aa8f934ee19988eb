package hub

import (
	"maps"
	"slices"
)

// Viewer is who holds a subscription, as presence sees it.
type Viewer struct {
	// User is the identity presence names (a token's subject); empty for an anonymous stream, counted but never named.
	User string
	// Frames asks for presence frames (see Hub.Notify).
	Frames bool
	// SeeUsers reports whether the viewer may see who watches topic; nil: nobody, the viewer gets counts only.
	SeeUsers func(topic string) bool
}

// watchers is a topic's subscriptions on this hub as presence counts them: how many, which users, how many want
// frames. It is guarded by Hub.mu.
type watchers struct {
	n      int
	frames int
	users  map[string]int // user -> streams
}

func (w *watchers) join(v Viewer) {
	w.n++
	if v.Frames {
		w.frames++
	}
	if v.User != "" {
		if w.users == nil {
			w.users = map[string]int{}
		}
		w.users[v.User]++
	}
}

func (w *watchers) leave(v Viewer) {
	w.n--
	if v.Frames {
		w.frames--
	}
	if v.User != "" {
		if w.users[v.User]--; w.users[v.User] <= 0 {
			delete(w.users, v.User)
		}
	}
}

// Watching is a topic's watchers on this hub: the number of streams, and the users among them, sorted, at most max
// of them (truncated says some were left out).
type Watching struct {
	Count     int
	Users     []string
	Truncated bool
}

// OnWatchers registers f to be told the name of every topic whose watchers change (a stream joined or left). It runs
// while the hub holds its lock, so it must only take note and return.
func (h *Hub) OnWatchers(f func(topic string)) { h.watching.Store(&f) }

func (h *Hub) watchersChanged(topic string) {
	if f := h.watching.Load(); f != nil {
		(*f)(topic)
	}
}

// Watchers returns topic's watchers on this hub, naming at most most users (most <= 0: none).
func (h *Hub) Watchers(topic string, most int) Watching {
	h.mu.RLock()
	defer h.mu.RUnlock()
	t := h.topics[topic]
	if t == nil {
		return Watching{}
	}
	w := Watching{Count: t.w.n}
	if most <= 0 {
		w.Truncated = len(t.w.users) > 0
		return w
	}
	w.Users = make([]string, 0, min(len(t.w.users), most))
	for u := range t.w.users {
		w.Users = append(w.Users, u)
	}
	slices.Sort(w.Users)
	if len(w.Users) > most {
		w.Users, w.Truncated = w.Users[:most:most], true
	}
	return w
}

// WatchedTopics returns the topics with at least one subscriber.
func (h *Hub) WatchedTopics() []string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return slices.Collect(maps.Keys(h.topics))
}

// FramedTopics returns the topics with a stream that asked for presence frames: it costs what they number, not what
// all the topics do.
func (h *Hub) FramedTopics() []string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return slices.Collect(maps.Keys(h.framed))
}

// Notify queues a presence frame for every subscription of topic that asked for frames: full to those who may see
// users, counted to the others (nil: nothing for them). Frames carry no id, so they never enter a client's position.
func (h *Hub) Notify(name string, full, counted *Event) {
	t, ok := h.live.Load(name)
	if !ok {
		return
	}
	for _, block := range t.(*topic).subs.Load().blocks {
		for _, s := range block {
			if !s.viewer.Frames {
				continue
			}
			ev := counted
			if s.seesUsers(name) {
				ev = full
			}
			if ev != nil {
				s.deliver(ev)
			}
		}
	}
}

// seesUsers reports whether the subscription's viewer may see who watches topic.
func (s *Subscription) seesUsers(topic string) bool {
	return s.viewer.SeeUsers != nil && s.viewer.SeeUsers(topic)
}
