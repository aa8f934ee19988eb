package notify

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// firstMembers are the members of a workflow's data kept first when it is cut: what a person reads.
var firstMembers = []string{"workflow", "status", "title", "step", "message", "progress", "error"}

// maxMember is the most one member of cut data may take, encoded.
const maxMember = 512

// truncateData cuts data to at most limit bytes. Data within it is returned as it is. Of an object, the members
// people read come first, then the others by name; a long string is shortened (ending in "…"), another value longer
// than maxMember bytes is left out, and members stop when the next would pass limit. Data that is not an object
// becomes null. The second result says whether anything was cut.
func truncateData(data json.RawMessage, limit int) (json.RawMessage, bool) {
	if len(data) <= limit {
		return data, false
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(data, &members) != nil || members == nil {
		return json.RawMessage("null"), true
	}
	names := make([]string, 0, len(members))
	for k := range members {
		names = append(names, k)
	}
	rank := func(k string) int {
		if i := slices.Index(firstMembers, k); i >= 0 {
			return i
		}
		return len(firstMembers)
	}
	slices.SortFunc(names, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return bytes.Compare([]byte(a), []byte(b))
	})
	var out bytes.Buffer
	out.WriteByte('{')
	for _, k := range names {
		key, _ := json.Marshal(k)
		v := shorten(members[k])
		if v == nil || len(key) > maxMember {
			continue
		}
		if out.Len()+len(key)+len(v)+3 > limit { // ':' ',' '}'
			continue
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		out.Write(key)
		out.WriteByte(':')
		out.Write(v)
	}
	out.WriteByte('}')
	return out.Bytes(), true
}

// shorten returns v within maxMember bytes: a string cut short, another value as it is or nil when too long.
func shorten(v json.RawMessage) json.RawMessage {
	if len(v) <= maxMember {
		return v
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return nil
	}
	for cut := maxMember / 2; cut > 0; cut -= 16 {
		if len(s) > cut {
			s = s[:cut]
		}
		for !utf8.ValidString(s) && len(s) > 0 {
			s = s[:len(s)-1]
		}
		b, _ := json.Marshal(s + "…")
		if len(b) <= maxMember {
			return b
		}
	}
	return nil
}
