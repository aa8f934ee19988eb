// Package auth decides who may read and write which topics. It verifies JWTs (HS256 with a shared secret;
// RS256, ES256/384/512 or EdDSA with a PEM public key, a JWKS file or an identity provider's JWKS URL, which
// Verifier.Run keeps fresh), reads the grant under the "hub" claim,
// finds the token in a request (Authorization: Bearer, a cookie, or ?access_token= when allowed) and signs tokens
// for the `hub token` command.
//
// It knows nothing of echo, Redis or SSE frames: the caller maps an *Error to its HTTP answer with Status and
// counts it by Reason. A Verifier and an Authenticator are safe for concurrent use; nothing in them changes after
// construction but the key set fetched from a JWKS URL, which is swapped whole.
//
// Expiry is exact: a token is never accepted at or after its exp, so a stream can end at exp and no client holds
// a stream its token no longer allows. The clock-skew allowance only forgives nbf and iat that lie slightly in
// the future, which is what a token from an issuer whose clock runs ahead looks like.
package auth
