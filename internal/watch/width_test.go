package watch

import "testing"

func TestTextWidth(t *testing.T) {
	tests := map[string]int{
		"abc": 3, "検索": 4, "e\u0301": 1, "\x1b[1;31mred\x1b[0m": 3, "█░…·": 4, "": 0, "ｆｕｌｌ": 8,
	}
	for s, want := range tests {
		if got := textWidth(s); got != want {
			t.Errorf("textWidth(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestFitAndPad(t *testing.T) {
	tests := []struct {
		s    string
		w    int
		want string
	}{
		{"hello", 10, "hello"}, {"hello world", 6, "hello…"}, {"検索検索", 5, "検索…"}, {"abc", 0, ""},
		{"\x1b[31mhello world\x1b[0m", 6, "\x1b[31mhello…\x1b[0m"},
	}
	for _, tt := range tests {
		if got := fitStyled(tt.s, tt.w); got != tt.want {
			t.Errorf("fitStyled(%q, %d) = %q, want %q", tt.s, tt.w, got, tt.want)
		}
	}
	if got := pad("検", 4, false); got != "検  " {
		t.Errorf("pad(検, 4) = %q, want two spaces after the wide character", got)
	}
	if got := pad("7s", 5, true); got != "   7s" {
		t.Errorf("pad(7s, 5, right) = %q", got)
	}
}
