package auth

import (
	"errors"
	"strings"
	"testing"

	"github.com/syncverse/hub/hub"
)

func TestCheckSubscribeNamesEveryDeniedTopic(t *testing.T) {
	g := Grant{Subscribe: []string{"project.*", "wf-1"}, Publish: []string{"wf-1"}}
	if err := g.CheckSubscribe([]string{"project.1", "wf-1"}); err != nil {
		t.Errorf("CheckSubscribe(allowed) = %v, want nil", err)
	}
	err := g.CheckSubscribe([]string{"project.1", "secret", "wf-2"})
	var ae *Error
	if !errors.As(err, &ae) || ae.Status() != 403 || !strings.Contains(err.Error(), "secret, wf-2") {
		t.Errorf("CheckSubscribe(two denied) = %v, want a 403 naming secret and wf-2", err)
	}
	if err := g.CheckPublish("project.1"); err == nil {
		t.Errorf("CheckPublish(project.1) = nil, want 403: a subscribe grant does not allow publishing")
	}
	many := make([]string, 20)
	for i := range many {
		many[i] = "x" + strings.Repeat("y", i)
	}
	if err := g.CheckSubscribe(many); !strings.Contains(err.Error(), "and 12 more") {
		t.Errorf("CheckSubscribe(20 denied) = %q, want a bounded list", err)
	}
}

// FuzzMatch holds Match to what a grant promises: an exact entry covers only itself, a prefix entry only topics
// with that prefix, and CheckSubscribe agrees with Match.
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{{"project.*", "project.42"}, {"*", "x"}, {"a", "a"}, {"a*", "b"}, {"a.*", "a"}, {"**", "*"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, topic string) {
		got := hub.Match(pattern, topic)
		prefix, wild := strings.CutSuffix(pattern, "*")
		if !wild && got != (pattern == topic) {
			t.Fatalf("Match(%q, %q) = %v for an exact pattern", pattern, topic, got)
		}
		if wild && got != strings.HasPrefix(topic, prefix) {
			t.Fatalf("Match(%q, %q) = %v for a prefix pattern", pattern, topic, got)
		}
		if hub.ValidatePattern(pattern) != nil || hub.ValidateTopic(topic) != nil {
			return
		}
		if strings.Contains(prefix, "*") {
			t.Fatalf("ValidatePattern(%q) accepted an inner '*'", pattern)
		}
		err := Grant{Subscribe: []string{pattern}}.CheckSubscribe([]string{topic})
		if (err == nil) != got {
			t.Fatalf("CheckSubscribe([%q]) on grant [%q] = %v, Match = %v", topic, pattern, err, got)
		}
		if !wild && pattern == topic && hub.Match(pattern, topic+"x") {
			t.Fatalf("exact pattern %q covers the longer topic %q", pattern, topic+"x")
		}
	})
}
