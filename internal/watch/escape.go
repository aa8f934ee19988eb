package watch

import (
	"fmt"
	"unicode/utf8"
)

// hiddenOnTerminal reports the characters a terminal must not be handed from an event's data, even inside JSON:
// DEL and the C1 controls (U+0080-U+009F; U+009B is a one-character CSI, U+009D an OSC, which some terminals act
// on), and the bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069) and marks (U+200E, U+200F,
// U+061C), which reorder what is shown after them so that a line reads other than it is.
func hiddenOnTerminal(r rune) bool {
	switch {
	case r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// escapeJSONForTerminal writes every hiddenOnTerminal character of a JSON text as a \uXXXX escape. Such characters
// can only stand inside JSON strings, where the escape means the same character, so the text decodes to the same
// value; a terminal shows the escape instead of acting on the character.
func escapeJSONForTerminal(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError || !hiddenOnTerminal(r) {
			if out != nil {
				out = append(out, b[i:i+n]...)
			}
			i += n
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(b)+16), b[:i]...)
		}
		out = fmt.Appendf(out, `\u%04x`, r)
		i += n
	}
	if out == nil {
		return b
	}
	return out
}
