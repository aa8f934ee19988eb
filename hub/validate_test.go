package hub

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateTopic(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{"project.42", true},
		{"wf-7f3a", true},
		{"A.b_c:d-e.0", true},
		{"x", true},
		{strings.Repeat("a", MaxTopicLen), true},
		{"", false},
		{strings.Repeat("a", MaxTopicLen+1), false},
		{"a b", false},
		{"a\r", false},
		{"a\nb", false},
		{"a\x00", false},
		{"{a}", false},
		{"a}", false},
		{"a*", false},
		{"a;b", false},
		{"a=b", false},
		{"a/b", false},
		{"a%2e", false},
		{"é", false},
		{"a\tb", false},
		{"?", false},
	}
	for _, c := range cases {
		err := ValidateTopic(c.in)
		if c.ok && err != nil {
			t.Errorf("ValidateTopic(%q) = %v, want nil", c.in, err)
		}
		if !c.ok && !errors.Is(err, ErrBadTopic) {
			t.Errorf("ValidateTopic(%q) = %v, want an error wrapping ErrBadTopic", c.in, err)
		}
	}
}

func TestValidateType(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{"progress", true},
		{"lock", true},
		{"a.b_c-d9", true},
		{strings.Repeat("a", MaxTypeLen), true},
		{"", false},
		{strings.Repeat("a", MaxTypeLen+1), false},
		{"Progress", false},
		{"a:b", false},
		{"a b", false},
		{"a\r", false},
		{"a\n", false},
		{"a\x00", false},
		{"{", false},
		{"}", false},
		{"*", false},
		{"ü", false},
	}
	for _, c := range cases {
		err := ValidateType(c.in)
		if c.ok && err != nil {
			t.Errorf("ValidateType(%q) = %v, want nil", c.in, err)
		}
		if !c.ok && !errors.Is(err, ErrBadType) {
			t.Errorf("ValidateType(%q) = %v, want an error wrapping ErrBadType", c.in, err)
		}
	}
}

func FuzzValidateTopic(f *testing.F) {
	for _, s := range []string{"project.42", "", "a\r\nb", "{a}", "*", strings.Repeat("z", 129)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := ValidateTopic(s)
		valid := len(s) >= 1 && len(s) <= MaxTopicLen
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._:-", c) >= 0) {
				valid = false
			}
		}
		if valid != (err == nil) {
			t.Fatalf("ValidateTopic(%q) = %v, want valid=%v", s, err, valid)
		}
		if err != nil && !errors.Is(err, ErrBadTopic) {
			t.Fatalf("ValidateTopic(%q) = %v, does not wrap ErrBadTopic", s, err)
		}
		if err == nil && strings.ContainsAny(s, "\r\n\x00{}*;= ") {
			t.Fatalf("ValidateTopic(%q) accepted a reserved or wire-breaking character", s)
		}
	})
}

func FuzzValidateType(f *testing.F) {
	for _, s := range []string{"progress", "", "A", "a\nb", strings.Repeat("z", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := ValidateType(s)
		valid := len(s) >= 1 && len(s) <= MaxTypeLen
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("._-", c) >= 0) {
				valid = false
			}
		}
		if valid != (err == nil) {
			t.Fatalf("ValidateType(%q) = %v, want valid=%v", s, err, valid)
		}
		if err != nil && !errors.Is(err, ErrBadType) {
			t.Fatalf("ValidateType(%q) = %v, does not wrap ErrBadType", s, err)
		}
	})
}
