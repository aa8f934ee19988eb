package watch

import "testing"

func TestCmpID(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1-0", "1-0", 0}, {"1-0", "1-1", -1}, {"2-0", "10-0", -1}, {"10-0", "9-99", 1},
		{"x", "1-0", -1}, {"1-0", "", 1}, {"", "", 0},
	}
	for _, tt := range tests {
		if got := cmpID(tt.a, tt.b); got != tt.want {
			t.Errorf("cmpID(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestCursorFor(t *testing.T) {
	pos := map[string]*position{"a": {resume: "5-0"}, "b": {}, "c": {resume: "7-1"}}
	if got := cursorFor([]string{"a"}, pos); got != "5-0" {
		t.Errorf("cursorFor(a) = %q, want 5-0", got)
	}
	if got := cursorFor([]string{"a", "b", "c"}, pos); got != "a=5-0;c=7-1" {
		t.Errorf("cursorFor(a, b, c) = %q, want a=5-0;c=7-1 (b has no position and starts fresh)", got)
	}
	if got := cursorFor([]string{"b"}, pos); got != "" {
		t.Errorf("cursorFor(b) = %q, want empty", got)
	}
}

func TestEventTopic(t *testing.T) {
	tests := []struct {
		raw       string
		topics    []string
		topic, id string
		ok        bool
	}{
		{"5-0", []string{"a"}, "a", "5-0", true},
		{"5-0", []string{"a", "b"}, "", "", false},
		{"b=6-0;a=5-0", []string{"a", "b"}, "b", "6-0", true},
		{"a=5-0", []string{"a"}, "a", "5-0", true},
		{"x%2Ey=1-0", []string{"x.y", "z"}, "x.y", "1-0", true},
		{"other=1-0;a=2-0", []string{"a", "b"}, "", "", false},
	}
	for _, tt := range tests {
		topic, id, ok := eventTopic(tt.raw, tt.topics)
		if topic != tt.topic || id != tt.id || ok != tt.ok {
			t.Errorf("eventTopic(%q, %v) = %q, %q, %v; want %q, %q, %v", tt.raw, tt.topics, topic, id, ok, tt.topic, tt.id, tt.ok)
		}
	}
}

func FuzzEventTopic(f *testing.F) {
	f.Add("a=1-0;b=2-0")
	f.Add("1-0")
	f.Fuzz(func(t *testing.T, raw string) {
		topics := []string{"a", "b"}
		if topic, _, ok := eventTopic(raw, topics); ok && topic != "a" && topic != "b" {
			t.Fatalf("eventTopic(%q) = topic %q, not one of %v", raw, topic, topics)
		}
	})
}
