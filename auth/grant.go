package auth

import (
	"fmt"
	"strings"

	"github.com/syncverse/hub/hub"
)

// Grant is what a token allows, read from its "hub" claim: {"subscribe": [...], "publish": [...], "presence": [...]}.
// Each entry is a topic, a prefix pattern ending in '*' ("project.*" covers every topic that starts with "project."),
// or "*" alone for every topic. Publishing does not imply subscribing, nor the reverse. Presence names the topics
// whose watchers' identities the holder may see (it still needs subscribe to ask); without it, counts only.
type Grant struct {
	Subscribe []string `json:"subscribe,omitempty"`
	Publish   []string `json:"publish,omitempty"`
	Presence  []string `json:"presence,omitempty"`
}

// Validate checks every entry, so a token with a malformed grant is refused as a whole.
func (g Grant) Validate() error {
	for i, p := range g.Subscribe {
		if err := hub.ValidatePattern(p); err != nil {
			return fmt.Errorf("hub.subscribe[%d]: %w", i, err)
		}
	}
	for i, p := range g.Publish {
		if err := hub.ValidatePattern(p); err != nil {
			return fmt.Errorf("hub.publish[%d]: %w", i, err)
		}
	}
	for i, p := range g.Presence {
		if err := hub.ValidatePattern(p); err != nil {
			return fmt.Errorf("hub.presence[%d]: %w", i, err)
		}
	}
	return nil
}

// CanSubscribe reports whether the grant lets its holder read topic.
func (g Grant) CanSubscribe(topic string) bool { return hub.MatchAny(g.Subscribe, topic) }

// CanSeePresence reports whether the grant lets its holder see who watches topic (subscribe is needed too).
func (g Grant) CanSeePresence(topic string) bool {
	return g.CanSubscribe(topic) && hub.MatchAny(g.Presence, topic)
}

// CanPublish reports whether the grant lets its holder write topic.
func (g Grant) CanPublish(topic string) bool { return hub.MatchAny(g.Publish, topic) }

// CheckSubscribe refuses topics the grant does not cover, naming every one of them: a multi-topic request is refused
// as a whole, never served with some topics silently dropped.
func (g Grant) CheckSubscribe(topics []string) error {
	var denied []string
	for _, t := range topics {
		if !g.CanSubscribe(t) {
			denied = append(denied, t)
		}
	}
	if len(denied) == 0 {
		return nil
	}
	return refuse(ReasonForbidden, "token does not allow subscribing to "+list(denied))
}

// CheckPublish refuses a topic the grant does not let its holder write.
func (g Grant) CheckPublish(topic string) error {
	if g.CanPublish(topic) {
		return nil
	}
	return refuse(ReasonForbidden, "token does not allow publishing to "+topic)
}

// list names topics for an error message, bounded so a long request cannot make a long answer.
func list(topics []string) string {
	const most = 8
	if len(topics) <= most {
		return strings.Join(topics, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(topics[:most], ", "), len(topics)-most)
}

func clip(s string) string {
	if len(s) > 48 {
		return s[:48] + "…"
	}
	return s
}
