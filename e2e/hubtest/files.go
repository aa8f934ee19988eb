package hubtest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// ReadFile is os.ReadFile that fails the test on an error.
func ReadFile(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ShellWords splits a command line as sh would for the simple quoting a Dockerfile uses.
func ShellWords(s string) []string {
	words, _ := splitWords(s, false)
	return words
}

// PlainWords is ShellWords for a command a test runs in-process, without a shell: an unbalanced quote, or a
// character outside quotes that only a shell gives a meaning to (| & ; < > ( ) $ ` \ * ?), is an error.
func PlainWords(s string) ([]string, error) { return splitWords(s, true) }

func splitWords(s string, plain bool) ([]string, error) {
	var words []string
	var cur strings.Builder
	quote, inWord := rune(0), false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case plain && strings.ContainsRune("|&;<>()$`\\*?", r):
			return nil, fmt.Errorf("%q needs a shell (%q); the in-process runner takes plain commands only", s, r)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if plain && quote != 0 {
		return nil, fmt.Errorf("unbalanced quote in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
