package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
)

// key is one verification key and the single algorithm it may verify. Binding each key to one algorithm is what
// stops algorithm confusion: an RSA public key is never used as an HMAC secret, whatever a token's header says.
type key struct {
	alg string
	kid string // empty: the key answers any kid
	key any    // []byte for HS256, *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey
}

// minRSABits refuses keys too weak to trust; 2048 is the floor NIST and every JOSE guide set.
const minRSABits = 2048

// loadPEM reads a public key (PKIX "PUBLIC KEY", PKCS#1 "RSA PUBLIC KEY" or the key of a "CERTIFICATE").
func loadPEM(path string) (key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return key{}, fmt.Errorf("auth.public_key_file: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return key{}, fmt.Errorf("auth.public_key_file %s: no PEM block", path)
	}
	var pub crypto.PublicKey
	switch block.Type {
	case "PUBLIC KEY":
		pub, err = x509.ParsePKIXPublicKey(block.Bytes)
	case "RSA PUBLIC KEY":
		pub, err = x509.ParsePKCS1PublicKey(block.Bytes)
	case "CERTIFICATE":
		var cert *x509.Certificate
		if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
			pub = cert.PublicKey
		}
	default:
		return key{}, fmt.Errorf("auth.public_key_file %s: PEM block %q is not a public key (a private key does not belong on the hub)", path, block.Type)
	}
	if err != nil {
		return key{}, fmt.Errorf("auth.public_key_file %s: %w", path, err)
	}
	k, err := publicKey(pub)
	if err != nil {
		return key{}, fmt.Errorf("auth.public_key_file %s: %w", path, err)
	}
	return k, nil
}

// publicKey picks the algorithm a public key verifies.
func publicKey(pub crypto.PublicKey) (key, error) {
	switch p := pub.(type) {
	case *rsa.PublicKey:
		if p.N.BitLen() < minRSABits {
			return key{}, fmt.Errorf("RSA key of %d bits, at least %d needed", p.N.BitLen(), minRSABits)
		}
		return key{alg: "RS256", key: p}, nil
	case *ecdsa.PublicKey:
		alg, ok := curveAlg[p.Curve]
		if !ok {
			return key{}, fmt.Errorf("unsupported EC curve %s", p.Curve.Params().Name)
		}
		return key{alg: alg, key: p}, nil
	case ed25519.PublicKey:
		return key{alg: "EdDSA", key: p}, nil
	default:
		return key{}, fmt.Errorf("unsupported public key type %T", pub)
	}
}

var curveAlg = map[elliptic.Curve]string{elliptic.P256(): "ES256", elliptic.P384(): "ES384", elliptic.P521(): "ES512"}

var crvByName = map[string]elliptic.Curve{"P-256": elliptic.P256(), "P-384": elliptic.P384(), "P-521": elliptic.P521()}

// jwk is the part of RFC 7517 the hub reads.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	Use string `json:"use"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// loadJWKS reads a JWKS file. Keys meant for encryption are skipped; a key the hub cannot read is an error, so a
// rotation that ships a broken key is noticed at start rather than when the first token signed with it arrives.
func loadJWKS(path string) ([]key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth.jwks_file: %w", err)
	}
	keys, unusable, err := parseJWKS(data, "auth.jwks_file "+path)
	if err == nil && len(unusable) > 0 {
		return nil, unusable[0]
	}
	return keys, err
}

// parseJWKS reads a JWKS document, from a file or from auth.jwks_url; src names it in errors. A signing key the hub
// cannot use (an unsupported type or alg, a weak RSA key, a point off its curve) is left out and told in unusable;
// the document is an error only when it cannot be read or leaves no usable key.
func parseJWKS(data []byte, src string) (keys []key, unusable []error, err error) {
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", src, err)
	}
	for i, j := range set.Keys {
		if j.Use != "" && j.Use != "sig" {
			continue
		}
		k, err := j.key()
		if err == nil && j.Alg != "" && j.Alg != k.alg {
			err = fmt.Errorf("alg %s does not fit a %s key", clip(j.Alg), k.alg)
		}
		if err != nil {
			unusable = append(unusable, fmt.Errorf("%s: key %d (kid %q): %w", src, i, clip(j.Kid), err))
			continue
		}
		k.kid = j.Kid
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, unusable, fmt.Errorf("%s: no usable signing keys%s", src, firstOf(unusable))
	}
	return keys, unusable, nil
}

// firstOf says why the first unusable key was left out, for an error about a set that has none left.
func firstOf(unusable []error) string {
	if len(unusable) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d left out; first: %v)", len(unusable), unusable[0])
}

func (j jwk) key() (key, error) {
	switch j.Kty {
	case "RSA":
		n, err1 := b64int(j.N)
		e, err2 := b64int(j.E)
		if err := errors.Join(err1, err2); err != nil {
			return key{}, err
		}
		if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 {
			return key{}, errors.New("bad RSA exponent")
		}
		return publicKey(&rsa.PublicKey{N: n, E: int(e.Int64())})
	case "EC":
		crv, ok := crvByName[j.Crv]
		if !ok {
			return key{}, fmt.Errorf("unsupported EC curve %q", j.Crv)
		}
		x, err1 := b64int(j.X)
		y, err2 := b64int(j.Y)
		if err := errors.Join(err1, err2); err != nil {
			return key{}, err
		}
		pub := &ecdsa.PublicKey{Curve: crv, X: x, Y: y}
		if _, err := pub.ECDH(); err != nil { // an off-curve point must never be trusted
			return key{}, fmt.Errorf("EC key: %w", err)
		}
		return publicKey(pub)
	case "OKP":
		x, err := base64.RawURLEncoding.DecodeString(j.X)
		if err != nil || j.Crv != "Ed25519" || len(x) != ed25519.PublicKeySize {
			return key{}, errors.New("OKP key must be Ed25519 with a 32-byte x")
		}
		return publicKey(ed25519.PublicKey(x))
	default:
		return key{}, fmt.Errorf("unsupported kty %q", j.Kty)
	}
}

func b64int(s string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, fmt.Errorf("bad base64url number %q", clip(s))
	}
	return new(big.Int).SetBytes(b), nil
}
