package hub

import (
	"errors"
	"strings"
	"testing"
)

// validCase is a name and whether a validator takes it.
type validCase struct {
	in string
	ok bool
}

// checkValidator runs validate (called name) on every case: nil for a valid one, an error wrapping sentinel else.
func checkValidator(t *testing.T, name string, validate func(string) error, sentinel error, cases []validCase) {
	t.Helper()
	for _, c := range cases {
		err := validate(c.in)
		if c.ok && err != nil {
			t.Errorf("%s(%q) = %v, want nil", name, c.in, err)
		}
		if !c.ok && !errors.Is(err, sentinel) {
			t.Errorf("%s(%q) = %v, want an error wrapping %v", name, c.in, err, sentinel)
		}
	}
}

// fitsAlphabet tells whether s has 1 to max bytes, each one allowed.
func fitsAlphabet(s string, max int, allowed func(c byte) bool) bool {
	if len(s) < 1 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !allowed(s[i]) {
			return false
		}
	}
	return true
}

// fuzzName fuzzes validate (called name), from seeds, against the tests' own statement of a valid name: 1 to max
// bytes, each one allowed. A refusal wraps sentinel, and no reserved or wire-breaking character is ever accepted.
func fuzzName(f *testing.F, name string, validate func(string) error, sentinel error, max int, allowed func(c byte) bool, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := validate(s)
		if valid := fitsAlphabet(s, max, allowed); valid != (err == nil) {
			t.Fatalf("%s(%q) = %v, want valid=%v", name, s, err, valid)
		}
		if err != nil && !errors.Is(err, sentinel) {
			t.Fatalf("%s(%q) = %v, does not wrap %v", name, s, err, sentinel)
		}
		if err == nil && strings.ContainsAny(s, "\r\n\x00{}*;= ") {
			t.Fatalf("%s(%q) accepted a reserved or wire-breaking character", name, s)
		}
	})
}

func TestValidateTopic(t *testing.T) {
	checkValidator(t, "ValidateTopic", ValidateTopic, ErrBadTopic, []validCase{
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
	})
}

func TestValidateType(t *testing.T) {
	checkValidator(t, "ValidateType", ValidateType, ErrBadType, []validCase{
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
	})
}

func FuzzValidateTopic(f *testing.F) {
	fuzzName(f, "ValidateTopic", ValidateTopic, ErrBadTopic, MaxTopicLen, func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._:-", c) >= 0
	}, "project.42", "", "a\r\nb", "{a}", "*", strings.Repeat("z", 129))
}

func FuzzValidateType(f *testing.F) {
	fuzzName(f, "ValidateType", ValidateType, ErrBadType, MaxTypeLen, func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("._-", c) >= 0
	}, "progress", "", "A", "a\nb", strings.Repeat("z", 65))
}
