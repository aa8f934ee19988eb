package hub

import (
	"errors"
	"fmt"
	"strings"
)

// A topic pattern names a set of topics: a topic, a prefix pattern ending in '*' ("project.*" covers every topic that
// starts with "project."), or "*" alone for every topic. Grants, webhook subscriptions and the workflow sweeper's
// topic filters are written in it.

// ErrBadPattern wraps every malformed topic pattern.
var ErrBadPattern = errors.New("invalid topic pattern")

// ValidatePattern checks one pattern. A '*' anywhere but at the end is refused rather than read literally: '*' is
// reserved in topics, so such a pattern can only be a mistake, and a mistake in a grant must not pass silently.
func ValidatePattern(p string) error {
	if p == "*" {
		return nil
	}
	prefix, _ := strings.CutSuffix(p, "*")
	if err := ValidateTopic(prefix); err != nil {
		if len(p) > 48 {
			p = p[:48] + "…"
		}
		return fmt.Errorf("%w %q: %v", ErrBadPattern, p, err)
	}
	return nil
}

// Match reports whether pattern covers topic: equal, or a prefix pattern whose prefix topic starts with.
func Match(pattern, topic string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(topic, prefix)
	}
	return pattern == topic
}

// MatchAny reports whether any of patterns covers topic.
func MatchAny(patterns []string, topic string) bool {
	for _, p := range patterns {
		if Match(p, topic) {
			return true
		}
	}
	return false
}
