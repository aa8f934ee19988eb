package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var b64 = base64.RawURLEncoding

// signRawHS signs a payload exactly as given, so a test can send JSON no encoder would write.
func signRawHS(payload string) string {
	signed := b64.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + b64.EncodeToString([]byte(payload))
	m := hmac.New(sha256.New, testSecret)
	m.Write([]byte(signed))
	return signed + "." + b64.EncodeToString(m.Sum(nil))
}

func refusedAs(t *testing.T, err error, reason Reason) bool {
	t.Helper()
	var ae *Error
	return errors.As(err, &ae) && ae.Reason == reason
}

// TestTokenSignatureDecodedStrictly (#14 item 9): the last character of an HS256 signature carries 2 unused bits;
// each of the 3 other spellings of the same signature is refused, so a token has one accepted encoding.
func TestTokenSignatureDecodedStrictly(t *testing.T) {
	v := testVerifier(t)
	tok := signHS(t, testSecret, validClaims(Grant{Publish: []string{"a"}}))
	if _, err := v.Verify(tok); err != nil {
		t.Fatalf("Verify(the canonical token) = %v", err)
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, tok[len(tok)-1])
	for bits := 1; bits < 4; bits++ {
		variant := tok[:len(tok)-1] + string(alphabet[last|bits])
		if _, err := v.Verify(variant); !refusedAs(t, err, ReasonBadToken) {
			t.Errorf("Verify(signature with unused bits %02b) = %v, want refused as bad_token", bits, err)
		}
	}
}

// TestPublishLimiterKeyedOnSignedPart (#14 item 9): an ECDSA signature (r, s) has a twin (r, n-s) that verifies
// too; both spellings of one token are one client for the publish-rate limiter.
func TestPublishLimiterKeyedOnSignedPart(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	v, err := NewVerifier(Config{PublicKeyFile: writePEM(t, &key.PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodES256, validClaims(Grant{Publish: []string{"a"}})).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	dot := strings.LastIndexByte(tok, '.')
	sig, _ := b64.DecodeString(tok[dot+1:])
	s := new(big.Int).SetBytes(sig[32:])
	s.Sub(elliptic.P256().Params().N, s)
	twin := append(sig[:32:32], s.FillBytes(make([]byte, 32))...)
	tok2 := tok[:dot+1] + b64.EncodeToString(twin)
	id1, err1 := v.Verify(tok)
	id2, err2 := v.Verify(tok2)
	if err1 != nil || err2 != nil {
		t.Fatalf("Verify(token), Verify(its twin signature) = %v, %v; want both valid (ECDSA allows both)", err1, err2)
	}
	if id1.Key != id2.Key {
		t.Errorf("Identity.Key = %q and %q for one token signed twice over; want one key", id1.Key, id2.Key)
	}
}

// TestClaimNamesCaseSensitive (#14 item 10): a claim spelled in another case is not that claim, and a payload with
// a duplicate or case-variant key is refused whole, rather than letting the last value win.
func TestClaimNamesCaseSensitive(t *testing.T) {
	v := testVerifier(t)
	now := time.Now().Unix()
	exp, past := now+3600, now-3600
	cases := []struct{ name, payload, errHas string }{
		{"duplicate exp", fmt.Sprintf(`{"iat":%d,"exp":%d,"exp":%d}`, now, past, exp), `duplicate claim "exp"`},
		{"Exp after exp", fmt.Sprintf(`{"iat":%d,"exp":%d,"Exp":%d}`, now, past, exp), `"Exp"`},
		{"Exp alone", fmt.Sprintf(`{"iat":%d,"Exp":%d}`, now, exp), `"Exp"`},
		{"Aud", fmt.Sprintf(`{"iat":%d,"exp":%d,"aud":"a","Aud":"b"}`, now, exp), `"Aud"`},
		{"HUB widens hub", fmt.Sprintf(`{"iat":%d,"exp":%d,"hub":{"publish":["a"]},"HUB":{"publish":["*"]}}`, now, exp), `"HUB"`},
		{"Publish inside hub", fmt.Sprintf(`{"iat":%d,"exp":%d,"hub":{"publish":["a"],"Publish":["*"]}}`, now, exp), `"Publish"`},
		{"duplicate inside hub", fmt.Sprintf(`{"iat":%d,"exp":%d,"hub":{"publish":["a"],"publish":["*"]}}`, now, exp), `duplicate claim "publish"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, err := v.Verify(signRawHS(c.payload))
			if !refusedAs(t, err, ReasonBadToken) || !strings.Contains(err.Error(), c.errHas) {
				t.Errorf("Verify(%s) = %+v, %v; want refused as bad_token naming %s", c.payload, id, err, c.errHas)
			}
		})
	}
	ok := fmt.Sprintf(`{"iat":%d,"exp":%d,"hub":{"publish":["a"]},"custom":{"x":1,"X":2}}`, now, exp)
	if id, err := v.Verify(signRawHS(ok)); err != nil || !id.Grant.CanPublish("a") {
		t.Errorf("Verify(%s) = %+v, %v; want valid (keys the hub does not read are its issuer's business)", ok, id, err)
	}
}

// FuzzCheckClaimKeys: any payload is either refused or has no two top-level keys equal without regard to case.
func FuzzCheckClaimKeys(f *testing.F) {
	f.Add(`{"exp":1,"Exp":2}`)
	f.Add(`{"hub":{"publish":["a"],"x":[{"a":1}]},"HUB":1}`)
	f.Add(`{"a":[1,{"b":{}}],"exp":1}`)
	f.Add(`[1,2]`)
	f.Fuzz(func(t *testing.T, payload string) {
		if checkClaimKeys(signRawHS(payload)) != nil {
			return
		}
		var top map[string]json.RawMessage
		if json.Unmarshal([]byte(payload), &top) != nil {
			return
		}
		dec := json.NewDecoder(strings.NewReader(payload))
		_, _ = dec.Token()
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return
			}
			k := strings.ToLower(tok.(string))
			if seen[k] {
				t.Fatalf("checkClaimKeys accepted %s: key %q twice", payload, k)
			}
			seen[k] = true
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return
			}
		}
	})
}
