package pubsub

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
)

// Publishing errors. Validation errors wrap ErrInvalid (or hub.ErrBadTopic / hub.ErrBadType, which also wrap
// nothing else) so callers can answer 400, and ErrTooLarge so they can answer 413.
var (
	ErrInvalid  = errors.New("invalid event")
	ErrTooLarge = errors.New("event too large")
	// ErrConflict: the publisher used the idempotency key for an event of other content (type or data) within
	// history.idempotency_ttl; nothing was stored. Callers answer 409.
	ErrConflict = errors.New("idempotency key reused with other content")
)

// ReservedTypes are the hub's own event types: the SSE control frames (reset, auth-expired, presence) and the
// workflow-health verdicts (health). Every publisher refuses them, so no stored event can pose as one.
var ReservedTypes = []string{"reset", "auth-expired", hub.PresenceType, "health"}

// controlTypes are the reserved types the hub only ever sends without an id; a stored event of one is never delivered.
func controlType(t string) bool { return t == "reset" || t == "auth-expired" || t == hub.PresenceType }

// MaxKeyLen is the longest idempotency key: 1 to 255 characters of visible ASCII.
const MaxKeyLen = 255

// MaxPublisherLen is the longest publisher name the idempotency records are kept under (a token's subject).
const MaxPublisherLen = 1024

// MaxIdempotencyTTL is the longest history.idempotency_ttl the publish script takes.
const MaxIdempotencyTTL = 24 * time.Hour

// maxJSONDepth is how deeply the script's JSON decoder (Redis's cjson) nests arrays and objects.
const maxJSONDepth = 1000

// Validate checks an event as every publisher must: a valid topic and type that is not one of ReservedTypes, data
// that is one JSON value no larger than max bytes, which the script's decoder accepts too. An empty type means
// hub.DefaultType.
func Validate(topic, eventType string, data []byte, max int) error {
	if err := hub.ValidateTopic(topic); err != nil {
		return err
	}
	if eventType != "" {
		if err := hub.ValidateType(eventType); err != nil {
			return err
		}
		for _, r := range ReservedTypes {
			if eventType == r {
				return fmt.Errorf("%w: %q is the hub's own (reserved: %s)", hub.ErrBadType, eventType, strings.Join(ReservedTypes, ", "))
			}
		}
	}
	if len(data) > max {
		return fmt.Errorf("%w: data is %d bytes, at most %d", ErrTooLarge, len(data), max)
	}
	if err := checkJSON(data); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}

// ValidateKey checks an idempotency key: 1 to MaxKeyLen characters of visible ASCII (no space or control).
func ValidateKey(key string) error {
	if key == "" || len(key) > MaxKeyLen {
		return fmt.Errorf("%w: idempotency key must be 1 to %d characters, got %d", ErrInvalid, MaxKeyLen, len(key))
	}
	for i := 0; i < len(key); i++ {
		if key[i] < '!' || key[i] > '~' {
			return fmt.Errorf("%w: idempotency key has character %q at %d (allowed: visible ASCII)", ErrInvalid, key[i], i)
		}
	}
	return nil
}

// checkJSON accepts one JSON value that both encoding/json and the script's cjson accept: cjson also refuses
// nesting deeper than maxJSONDepth and a \u escape of a lone UTF-16 surrogate.
func checkJSON(data []byte) error {
	if !json.Valid(data) {
		return errors.New("data is not one valid JSON value")
	}
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '[', '{':
			if depth++; depth > maxJSONDepth {
				return fmt.Errorf("data nests deeper than %d arrays and objects", maxJSONDepth)
			}
		case ']', '}':
			depth--
		case '"':
			end, err := checkString(data, i+1)
			if err != nil {
				return err
			}
			i = end
		}
	}
	return nil
}

// checkString scans a string that json.Valid has accepted, from just after its opening quote, and returns the index
// of its closing quote. A high surrogate escape must be followed by a low one, and a low one must follow a high one.
func checkString(data []byte, i int) (int, error) {
	for ; data[i] != '"'; i++ {
		if data[i] != '\\' {
			continue
		}
		i++
		if data[i] != 'u' {
			continue
		}
		r := hex4(data[i+1 : i+5])
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return 0, fmt.Errorf("data has a lone UTF-16 surrogate \\u%04x", r)
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 >= len(data) || data[i+1] != '\\' || data[i+2] != 'u' {
				return 0, fmt.Errorf("data has a lone UTF-16 surrogate \\u%04x", r)
			}
			if lo := hex4(data[i+3 : i+7]); lo < 0xDC00 || lo > 0xDFFF {
				return 0, fmt.Errorf("data has a lone UTF-16 surrogate \\u%04x", r)
			}
			i += 6
		}
	}
	return i, nil
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		default:
			r = r<<4 | rune(c-'A'+10)
		}
	}
	return r
}

// scriptRefusals are the publish script's validation replies and the error each is reported as. They are the
// caller's fault (400/413), not an outage.
var scriptRefusals = []struct {
	text string
	kind error
}{
	{"invalid event type", hub.ErrBadType},
	{"reserved event type", hub.ErrBadType},
	{"event too large", ErrTooLarge},
	{"data is not valid JSON", ErrInvalid},
	{"invalid idempotency key", ErrInvalid},
	{"invalid idempotency ttl", ErrInvalid},
	{"idempotency key reused with other content", ErrConflict},
}

// refusal returns the validation error a script error reply stands for, or nil when it is something else.
func refusal(err error) error {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return nil
	}
	msg := rerr.Error()
	for _, r := range scriptRefusals {
		if strings.HasPrefix(msg, "ERR "+r.text) {
			return fmt.Errorf("%w: the publish script refused it: %s", r.kind, r.text)
		}
	}
	return nil
}
