package hub

import (
	"errors"
	"fmt"
)

// Limits of names, fixed by the contract.
const (
	MaxTopicLen = 128
	MaxTypeLen  = 64
	// DefaultType is the type of an event published without one.
	DefaultType = "progress"
)

// ErrBadTopic and ErrBadType wrap every validation failure, so callers can map them to one status.
var (
	ErrBadTopic = errors.New("invalid topic")
	ErrBadType  = errors.New("invalid event type")
)

// ValidateTopic checks a topic name: 1 to 128 characters of [A-Za-z0-9._:-]. The braces and '*' are reserved (the
// braces are the Redis Cluster hash tag around the topic, '*' is a subscription pattern).
func ValidateTopic(t string) error {
	if t == "" {
		return fmt.Errorf("%w: empty", ErrBadTopic)
	}
	if len(t) > MaxTopicLen {
		return fmt.Errorf("%w: %d characters, at most %d", ErrBadTopic, len(t), MaxTopicLen)
	}
	for i := 0; i < len(t); i++ {
		if !topicByte(t[i]) {
			return fmt.Errorf("%w: character %q at %d (allowed: A-Z a-z 0-9 . _ : -)", ErrBadTopic, t[i], i)
		}
	}
	return nil
}

func topicByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-'
}

// ValidateType checks an event type: 1 to 64 characters of [a-z0-9._-].
func ValidateType(t string) error {
	if t == "" {
		return fmt.Errorf("%w: empty", ErrBadType)
	}
	if len(t) > MaxTypeLen {
		return fmt.Errorf("%w: %d characters, at most %d", ErrBadType, len(t), MaxTypeLen)
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%w: character %q at %d (allowed: a-z 0-9 . _ -)", ErrBadType, c, i)
		}
	}
	return nil
}
