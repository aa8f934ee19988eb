package auth

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// Claim names the hub reads, per object: the payload's own, and those of its "hub" grant. encoding/json matches
// names without regard to case and lets a repeated name's last value win, so "Exp", "Aud" or a second "hub" would
// override what an issuer meant; checkClaimKeys refuses such payloads before they are decoded.
var (
	topClaims   = []string{"iss", "sub", "aud", "exp", "nbf", "iat", "jti", "hub"}
	grantClaims = []string{"subscribe", "publish"}
)

// checkClaimKeys refuses a token whose payload repeats a key, or spells a claim the hub reads in another case,
// in the payload or in its "hub" object. A token that does not split or decode is left to the parser to refuse.
func checkClaimKeys(raw string) error {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return nil
	}
	payload, err := base64.RawURLEncoding.Strict().DecodeString(parts[1])
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	return checkObject(dec, topClaims)
}

// checkObject reads the rest of an object whose '{' dec has just read. known are the names the hub reads there;
// the "hub" member's own are checked the same way.
func checkObject(dec *json.Decoder, known []string) error {
	seen := map[string]string{} // lower-case name -> the spelling met first
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil // the parser refuses it
		}
		name, _ := tok.(string)
		if first, ok := seen[strings.ToLower(name)]; ok {
			if first == name {
				return refuse(ReasonBadToken, fmt.Sprintf("invalid token: duplicate claim %q", clip(name)))
			}
			return refuse(ReasonBadToken, fmt.Sprintf("invalid token: claims %q and %q differ only in case", clip(first), clip(name)))
		}
		seen[strings.ToLower(name)] = name
		for _, k := range known {
			if name != k && strings.EqualFold(name, k) {
				return refuse(ReasonBadToken, fmt.Sprintf("invalid token: claim %q: claim names are case-sensitive (%q)", clip(name), k))
			}
		}
		if err := skipOrCheck(dec, name == "hub" && len(known) == len(topClaims)); err != nil {
			return err
		}
	}
	_, _ = dec.Token() // the object's '}'
	return nil
}

// skipOrCheck reads one value: the grant object is checked, anything else skipped whole.
func skipOrCheck(dec *json.Decoder, grant bool) error {
	tok, err := dec.Token()
	if err != nil {
		return nil
	}
	if grant && tok == json.Delim('{') {
		return checkObject(dec, grantClaims)
	}
	for depth := 0; ; {
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
		if tok, err = dec.Token(); err != nil {
			return nil
		}
	}
}
