package pubsub

import "strings"

// DefaultPrefix is the key prefix used when none is configured.
const DefaultPrefix = "hub"

// Keys names a topic's Redis keys and channel. The topic sits in a hash tag, {topic}, so all of one topic's keys and
// its channel live in one Redis Cluster slot.
type Keys struct{ Prefix string }

func (k Keys) prefix() string {
	if k.Prefix == "" {
		return DefaultPrefix
	}
	return k.Prefix
}

// Stream is the key of the topic's history stream.
func (k Keys) Stream(topic string) string { return k.prefix() + ":{" + topic + "}:events" }

// Channel is the topic's live pub/sub channel.
func (k Keys) Channel(topic string) string { return k.prefix() + ":{" + topic + "}:live" }

// State is the key of the topic's snapshot hash: the latest progress event per workflow and lock event per key.
func (k Keys) State(topic string) string { return k.prefix() + ":{" + topic + "}:state" }

// StreamPattern matches every topic's stream key, for SCAN.
func (k Keys) StreamPattern() string { return k.prefix() + ":{*}:events" }

// TopicOf returns the topic named by a channel or key of this prefix with the given suffix, and whether it is one.
func (k Keys) TopicOf(name, suffix string) (string, bool) {
	p := k.prefix() + ":{"
	if !strings.HasPrefix(name, p) || !strings.HasSuffix(name, "}:"+suffix) {
		return "", false
	}
	t := name[len(p) : len(name)-len(suffix)-2]
	return t, t != ""
}

// Idempotency is the key that records a publisher's idempotency key on the topic, in the topic's slot:
// <prefix>:{<topic>}:idem:<publisher>:<key>, the publisher with "%" written "%25" and ":" written "%3A" so that no
// publisher's keys can name another's record.
func (k Keys) Idempotency(topic, publisher, key string) string {
	return k.prefix() + ":{" + topic + "}:idem:" + publisherEscaper.Replace(publisher) + ":" + key
}

var publisherEscaper = strings.NewReplacer("%", "%25", ":", "%3A")

// Presence is the key of the topic's presence hash: one field per hub that has watchers of the topic.
func (k Keys) Presence(topic string) string { return k.prefix() + ":{" + topic + "}:presence" }
