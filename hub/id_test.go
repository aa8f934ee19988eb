package hub

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseID(t *testing.T) {
	max := strconv.FormatUint(math.MaxUint64, 10)
	cases := []struct {
		in      string
		want    ID
		wantErr bool
	}{
		{"0-0", ID{}, false},
		{"1732870000000-0", ID{Ms: 1732870000000}, false},
		{"1732870000000-17", ID{Ms: 1732870000000, Seq: 17}, false},
		{max + "-" + max, ID{Ms: math.MaxUint64, Seq: math.MaxUint64}, false},
		{"007-01", ID{Ms: 7, Seq: 1}, false}, // leading zeros parse; String gives the canonical form
		{"", ID{}, true},
		{"-", ID{}, true},
		{"1", ID{}, true},
		{"1-", ID{}, true},
		{"-1", ID{}, true},
		{"1-2-3", ID{}, true},
		{"+1-2", ID{}, true},
		{"1-+2", ID{}, true},
		{"-1-2", ID{}, true},
		{" 1-2", ID{}, true},
		{"1-2 ", ID{}, true},
		{"1-2\n", ID{}, true},
		{"1_000-0", ID{}, true},
		{"0x1-0", ID{}, true},
		{"1-*", ID{}, true},
		{"*", ID{}, true},
		{"1e3-0", ID{}, true},
		{"18446744073709551616-0", ID{}, true}, // MaxUint64+1
		{"0-18446744073709551616", ID{}, true},
		{strings.Repeat("0", 21) + "-0", ID{}, true},
		{"١-٢", ID{}, true}, // Arabic-Indic digits
	}
	for _, c := range cases {
		got, err := ParseID(c.in)
		if c.wantErr {
			if !errors.Is(err, ErrBadID) {
				t.Errorf("ParseID(%q) = %v, %v; want ErrBadID", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseID(%q) = %v, %v; want %v, nil", c.in, got, err, c.want)
		}
	}
}

func TestIDFormat(t *testing.T) {
	for _, c := range []struct {
		id   ID
		want string
	}{
		{ID{}, "0-0"},
		{ID{Ms: 1732870000000, Seq: 3}, "1732870000000-3"},
		{ID{Ms: math.MaxUint64, Seq: math.MaxUint64}, "18446744073709551615-18446744073709551615"},
	} {
		if got := c.id.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.id, got, c.want)
		}
		if got := string(c.id.Append([]byte("x="))); got != "x="+c.want {
			t.Errorf("%#v.Append(x=) = %q, want %q", c.id, got, "x="+c.want)
		}
	}
	if !(ID{}).IsZero() || (ID{Seq: 1}).IsZero() {
		t.Errorf("IsZero: 0-0 → %v, 0-1 → %v; want true, false", (ID{}).IsZero(), (ID{Seq: 1}).IsZero())
	}
}

func TestIDOrder(t *testing.T) {
	sorted := []ID{{}, {Seq: 1}, {Seq: math.MaxUint64}, {Ms: 1}, {Ms: 1, Seq: 2}, {Ms: 2}, {Ms: math.MaxUint64, Seq: math.MaxUint64}}
	for i, a := range sorted {
		for j, b := range sorted {
			if got, want := a.Less(b), i < j; got != want {
				t.Errorf("%v.Less(%v) = %v, want %v", a, b, got, want)
			}
			if got, want := a.Compare(b), cmp.Compare(i, j); got != want {
				t.Errorf("%v.Compare(%v) = %d, want %d", a, b, got, want)
			}
		}
	}
	shuffled := []ID{sorted[4], sorted[0], sorted[6], sorted[2], sorted[5], sorted[1], sorted[3]}
	slices.SortFunc(shuffled, ID.Compare)
	if !slices.Equal(shuffled, sorted) {
		t.Errorf("sorted by Compare: %v, want %v", shuffled, sorted)
	}
}

func FuzzParseID(f *testing.F) {
	for _, s := range []string{"0-0", "1732870000000-0", "18446744073709551615-18446744073709551615", "1-", "-1", "007-01", "1-2-3", "18446744073709551616-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseID(s)
		if err != nil {
			if !errors.Is(err, ErrBadID) {
				t.Fatalf("ParseID(%q) error %v does not wrap ErrBadID", s, err)
			}
			return
		}
		text := id.String()
		again, err := ParseID(text)
		if err != nil || again != id {
			t.Fatalf("ParseID(%q) = %v; ParseID(%q) = %v, %v; want the same id", s, id, text, again, err)
		}
		if len(text) > len(s) {
			t.Fatalf("ParseID(%q) accepted text longer than its canonical form %q", s, text)
		}
		for _, c := range s {
			if (c < '0' || c > '9') && c != '-' {
				t.Fatalf("ParseID(%q) = %v, nil; accepted the character %q", s, id, c)
			}
		}
	})
}
