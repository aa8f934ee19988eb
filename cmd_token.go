package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/syncverse/hub/auth"
)

// patterns is a repeatable flag; each use may also hold a comma-separated list.
type patterns []string

func (p *patterns) String() string { return strings.Join(*p, ",") }

func (p *patterns) Set(v string) error {
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*p = append(*p, s)
		}
	}
	return nil
}

// tokenCommand is `hub token`: it prints a token signed with the configured HS256 secret, for operators who hand
// tokens to consoles and agents. Tokens for RS256/ES256/EdDSA come from whoever holds the private key.
func tokenCommand(_ context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sub, pub patterns
	fs.Var(&sub, "subscribe", "topic or prefix `pattern` (project.*) the holder may read; repeatable")
	fs.Var(&pub, "publish", "topic or prefix `pattern` the holder may publish to; repeatable")
	ttl := fs.Duration("ttl", time.Hour, "how long the token is valid")
	subject := fs.String("subject", "", "who the token is for (the sub claim), e.g. console-ops or agent-7")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: hub token --subscribe PATTERN... [--publish PATTERN...] [--ttl 1h] [--subject NAME]")
		fmt.Fprintln(stderr, "Prints a token signed with auth.hmac_secret (HUB_AUTH_HMAC_SECRET).")
		fs.PrintDefaults()
	}
	cfg, err := loadConfig(fs, args, getenv)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hub token: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	if cfg.Auth.HMACSecret == "" {
		return errors.New("auth.hmac_secret (HUB_AUTH_HMAC_SECRET) is not set; tokens for public-key auth are signed by your identity provider")
	}
	tok, err := auth.Sign([]byte(cfg.Auth.HMACSecret), auth.Grant{Subscribe: sub, Publish: pub}, auth.Claims{
		Subject: *subject, Issuer: cfg.Auth.Issuer, Audience: cfg.Auth.Audience, TTL: *ttl,
	}, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	return nil
}
