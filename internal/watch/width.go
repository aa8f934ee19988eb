package watch

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"
)

// runeWidth is how many terminal cells r takes: two for East Asian wide and fullwidth characters, none for
// combining marks and controls, one otherwise.
func runeWidth(r rune) int {
	switch {
	case r < 0x20 || r == 0x7f:
		return 0
	case r < 0x300:
		return 1
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == 0x200b:
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// textWidth is how many cells s takes; SGR sequences take none.
func textWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if k := escapeLen(s[i:]); k > 0 {
			i += k
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runeWidth(r)
		i += size
	}
	return n
}

// escapeLen is the length of the CSI sequence s starts with, or 0.
func escapeLen(s string) int {
	if len(s) < 2 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		if c := s[i]; c >= 0x40 && c <= 0x7e {
			return i + 1
		}
	}
	return len(s)
}

// fit is s cut to at most w cells, with "…" where it was cut.
func fit(s string, w int) string {
	return fitStyled(s, w)
}

// fitStyled is fit for a string that may hold SGR sequences: they are kept, take no room, and a cut string ends
// with a reset so that no colour leaks past it.
func fitStyled(s string, w int) string {
	if textWidth(s) <= w {
		return s
	}
	if w <= 0 {
		return ""
	}
	var b strings.Builder
	used, styled := 0, false
	for i := 0; i < len(s); {
		if k := escapeLen(s[i:]); k > 0 {
			b.WriteString(s[i : i+k])
			styled = true
			i += k
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		rw := runeWidth(r)
		if used+rw > w-1 {
			break
		}
		b.WriteRune(r)
		used += rw
		i += size
	}
	b.WriteString("…")
	if styled {
		b.WriteString(sgrReset)
	}
	return b.String()
}

// pad is s fitted to exactly w cells, padded on the right (or on the left when right is set).
func pad(s string, w int, right bool) string {
	s = fit(s, w)
	gap := strings.Repeat(" ", max(0, w-textWidth(s)))
	if right {
		return gap + s
	}
	return s + gap
}
