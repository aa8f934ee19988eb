package hub

import (
	"cmp"
	"errors"
	"strconv"
	"strings"
)

// ID is a Redis stream entry id, <ms>-<seq>. The zero ID (0-0) sorts before every stored entry.
type ID struct {
	Ms, Seq uint64
}

// ErrBadID reports a string that is not a stream id.
var ErrBadID = errors.New("not a stream id (want <ms>-<seq>)")

// ParseID parses "<ms>-<seq>". It accepts nothing else: no spaces, signs or missing parts.
func ParseID(s string) (ID, error) {
	ms, seq, ok := strings.Cut(s, "-")
	if !ok || !digits(ms) || !digits(seq) {
		return ID{}, ErrBadID
	}
	m, err1 := strconv.ParseUint(ms, 10, 64)
	q, err2 := strconv.ParseUint(seq, 10, 64)
	if err1 != nil || err2 != nil {
		return ID{}, ErrBadID
	}
	return ID{Ms: m, Seq: q}, nil
}

func digits(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String formats the id as Redis does.
func (id ID) String() string {
	b := make([]byte, 0, 41)
	return string(id.Append(b))
}

// Append appends the id's text to b.
func (id ID) Append(b []byte) []byte {
	b = strconv.AppendUint(b, id.Ms, 10)
	b = append(b, '-')
	return strconv.AppendUint(b, id.Seq, 10)
}

// Less reports whether id sorts before o.
func (id ID) Less(o ID) bool {
	return id.Ms < o.Ms || (id.Ms == o.Ms && id.Seq < o.Seq)
}

// Compare returns -1 when id sorts before o, 1 when after, 0 when they are the same (for slices.SortFunc and
// cmp.Or).
func (id ID) Compare(o ID) int {
	return cmp.Or(cmp.Compare(id.Ms, o.Ms), cmp.Compare(id.Seq, o.Seq))
}

// IsZero reports whether id is 0-0.
func (id ID) IsZero() bool { return id == ID{} }
