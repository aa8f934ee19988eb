package eventschema

import (
	"strconv"
)

// progressValid reports whether data certainly matches docs/schemas/progress.json, without the library: every
// event the hub receives is checked, and progress events are the most of them, so the common case (valid data, a
// flat object of short fields) must not cost a decode into maps and a schema walk (about 5.6 µs and 58
// allocations; this is a single pass with none). False means "not certain": the caller asks the library, which
// also names the problems. It claims valid only what the library accepts (FuzzProgressFastPathAgrees); numbers
// with more than 15 digits or an exponent, escaped names and deep nesting are left to the library. The fields
// it knows are the schema's (TestProgressFastPathKnowsTheSchemasFields).
func progressValid(data []byte) bool {
	s := scanner{b: data}
	s.space()
	if !s.byte('{') {
		return false
	}
	workflow := false
	s.space()
	if s.byte('}') {
		return false // workflow is required
	}
	for {
		s.space()
		key, ok := s.plainString()
		if !ok {
			return false
		}
		s.space()
		if !s.byte(':') {
			return false
		}
		s.space()
		switch string(key) {
		case "workflow":
			n, _, ok := s.string()
			if !ok || n == 0 {
				return false
			}
			workflow = true
		case "title", "step", "message", "agent":
			if _, _, ok := s.string(); !ok {
				return false
			}
		case "progress":
			if f, ok := s.number(); !ok || f < 0 || f > 1 {
				return false
			}
		case "eta_s":
			if f, ok := s.number(); !ok || f < 0 {
				return false
			}
		case "status":
			v, ok := s.plainString()
			if !ok || !progressStatus[string(v)] {
				return false
			}
		default:
			if !s.value(0) {
				return false
			}
		}
		s.space()
		if s.byte('}') {
			break
		}
		if !s.byte(',') {
			return false
		}
	}
	s.space()
	return workflow && s.i == len(s.b)
}

// progressStatus is progress.json's status enum.
var progressStatus = map[string]bool{"queued": true, "running": true, "succeeded": true, "failed": true, "cancelled": true}

// scanner reads JSON forward; each method reports false for what it cannot be sure of.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *scanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// plainString reads a string without escapes and returns its text, aliasing the input (compared in a switch or
// looked up in a map, it is not copied).
func (s *scanner) plainString() ([]byte, bool) {
	start := s.i + 1
	n, escaped, ok := s.string()
	if !ok || escaped {
		return nil, false
	}
	return s.b[start : start+n], true
}

// string skips a valid JSON string and returns the length of its raw text (0: empty) and whether it holds escapes.
func (s *scanner) string() (n int, escaped, ok bool) {
	if !s.byte('"') {
		return 0, false, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.i - 1 - start, escaped, true
		case c < 0x20:
			return 0, false, false
		case c == '\\':
			escaped = true
			if s.i+1 >= len(s.b) {
				return 0, false, false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) || !hex4(s.b[s.i+2:s.i+6]) {
					return 0, false, false
				}
				s.i += 6
			default:
				return 0, false, false
			}
			continue
		}
		s.i++
	}
	return 0, false, false
}

func hex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// number reads a JSON number of at most 15 digits and no exponent (exact enough that comparing it with the schema's
// bounds as a float64 agrees with the library's exact comparison) and returns its value.
func (s *scanner) number() (float64, bool) {
	start := s.i
	if !s.anyNumber() {
		return 0, false
	}
	text, digits := s.b[start:s.i], 0
	for _, c := range text {
		switch {
		case c == 'e' || c == 'E':
			return 0, false
		case '0' <= c && c <= '9':
			digits++
		}
	}
	if digits > 15 {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(text), 64)
	return f, err == nil
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// maxDepth is how deep value follows an unknown field's arrays and objects before it leaves them to the library.
const maxDepth = 16

// value skips any valid JSON value (an unknown field's: the schema allows them, whatever they hold).
func (s *scanner) value(depth int) bool {
	if depth > maxDepth || s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, _, ok := s.string()
		return ok
	case c == '{':
		return s.container('}', depth, true)
	case c == '[':
		return s.container(']', depth, false)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	default:
		return s.anyNumber()
	}
}

// container skips an object (keyed) or an array up to its closing byte.
func (s *scanner) container(end byte, depth int, keyed bool) bool {
	s.i++
	s.space()
	if s.byte(end) {
		return true
	}
	for {
		s.space()
		if keyed {
			if _, _, ok := s.string(); !ok {
				return false
			}
			s.space()
			if !s.byte(':') {
				return false
			}
			s.space()
		}
		if !s.value(depth + 1) {
			return false
		}
		s.space()
		if s.byte(end) {
			return true
		}
		if !s.byte(',') {
			return false
		}
	}
}

func (s *scanner) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// anyNumber skips a JSON number of any size (its grammar only; number reads its value).
func (s *scanner) anyNumber() bool {
	s.byte('-')
	switch {
	case s.byte('0'):
	case s.i < len(s.b) && '1' <= s.b[s.i] && s.b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.byte('.') && s.digits() == 0 {
		return false
	}
	if s.byte('e') || s.byte('E') {
		if !s.byte('+') {
			s.byte('-')
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}
