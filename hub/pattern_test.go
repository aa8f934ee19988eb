package hub

import (
	"errors"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		pattern, topic string
		want           bool
	}{
		{"project.42", "project.42", true},
		{"project.42", "project.421", false},
		{"project.42", "project.4", false},
		{"project.*", "project.42", true},
		{"project.*", "project.", true},
		{"project.*", "project", false},
		{"project.*", "projectX", false},
		{"project*", "project-secret", true},
		{"*", "anything", true},
		{"", "", true}, // never reached: an empty entry fails ValidatePattern and an empty topic fails ValidateTopic
	}
	for _, c := range cases {
		if got := Match(c.pattern, c.topic); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pattern, c.topic, got, c.want)
		}
	}
}

func TestValidatePattern(t *testing.T) {
	for _, p := range []string{"*", "a", "project.*", "wf-7f3a", "a:b_c.d-*", strings.Repeat("x", 128), strings.Repeat("x", 128) + "*"} {
		if err := ValidatePattern(p); err != nil {
			t.Errorf("ValidatePattern(%q) = %v, want nil", p, err)
		}
	}
	for _, p := range []string{"", "**", "*.a", "a*b", "a**", "{a}", "a b", "a\nb", "a\x00", strings.Repeat("x", 129)} {
		if err := ValidatePattern(p); !errors.Is(err, ErrBadPattern) {
			t.Errorf("ValidatePattern(%q) = %v, want ErrBadPattern", p, err)
		}
	}
}
