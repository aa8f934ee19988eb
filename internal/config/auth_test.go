package config

import (
	"reflect"
	"testing"

	"github.com/syncverse/hub/auth"
)

// auth.roles maps role names to patterns in config.yaml, strictly: a misspelt field is an error, not a role that
// silently grants nothing.
func TestConfigAuthRoles(t *testing.T) {
	cfg, err := cfgLoad(t, nil, "--config", cfgFile(t, `
auth:
  hmac_secret: 0123456789abcdef0123456789abcdef
  roles_claim: realm_access.roles
  roles:
    operators: {subscribe: ["*"], publish: []}
    agents: {subscribe: ["project.*"], publish: ["project.*"]}
`))
	if err != nil {
		t.Fatalf("Load = %v", err)
	}
	want := map[string]auth.Grant{"operators": {Subscribe: []string{"*"}, Publish: []string{}},
		"agents": {Subscribe: []string{"project.*"}, Publish: []string{"project.*"}}}
	if cfg.Auth.RolesClaim != "realm_access.roles" || !reflect.DeepEqual(cfg.Auth.Roles, want) {
		t.Errorf("auth.roles_claim, auth.roles = %q, %+v; want realm_access.roles, %+v", cfg.Auth.RolesClaim, cfg.Auth.Roles, want)
	}
	_, err = cfgLoad(t, nil, "--config", cfgFile(t, "auth:\n  roles_claim: groups\n  roles:\n    ops: {subscribes: [\"*\"]}\n"))
	cfgErrHas(t, "Load(roles with a misspelt field)", err, "subscribes")
}

func TestConfigAuthKeysThatGoTogether(t *testing.T) {
	for name, c := range map[string]struct {
		yaml string
		want []string
	}{
		"roles without a claim":         {"auth:\n  roles: {ops: {subscribe: [a]}}\n", []string{"auth.roles is set but auth.roles_claim"}},
		"a claim without roles":         {"auth:\n  roles_claim: groups\n", []string{"auth.roles_claim is set but auth.roles"}},
		"proxy header without proxies":  {"auth:\n  proxy_header: X-Forwarded-Access-Token\n", []string{"limits.trusted_proxies, which is empty"}},
		"proxy header is Authorization": {"auth:\n  proxy_header: authorization\nlimits:\n  trusted_proxies: [10.0.0.1]\n", []string{"auth.proxy_header \"authorization\""}},
		"proxy header with a space":     {"auth:\n  proxy_header: X Token\nlimits:\n  trusted_proxies: [10.0.0.1]\n", []string{"is not a header name"}},
		"login url without a scheme":    {"auth:\n  login_url: login.example.com/hub\n", []string{"auth.login_url"}},
		"login url protocol-relative":   {"auth:\n  login_url: //evil.example/x\n", []string{"auth.login_url"}},
		"refresh too short":             {"auth:\n  jwks_refresh: 10ms\n", []string{"auth.jwks_refresh"}},
	} {
		_, err := cfgLoad(t, nil, "--config", cfgFile(t, c.yaml))
		cfgErrHas(t, "Load("+name+")", err, c.want...)
	}
	for _, ok := range []string{"auth:\n  login_url: /login\n", "auth:\n  login_url: https://sso.example.com/hub?x=1\n",
		"auth:\n  proxy_header: X-Forwarded-Access-Token\nlimits:\n  trusted_proxies: [10.0.0.0/8]\n"} {
		if _, err := cfgLoad(t, nil, "--config", cfgFile(t, ok)); err != nil {
			t.Errorf("Load(%q) = %v, want accepted", ok, err)
		}
	}
}

// auth.jwks_url without auth.audience would accept the identity provider's tokens for every other client of it: the
// hub refuses to start and says what to set; "*" accepts any audience on purpose, and tokens are then held to none.
func TestConfigJWKSURLNeedsAnAudience(t *testing.T) {
	_, err := cfgLoad(t, nil, "--config", cfgFile(t, "auth:\n  jwks_url: https://sso.example.com/certs\n"))
	cfgErrHas(t, "Load(jwks_url without audience)", err, "auth.audience: must be set with auth.jwks_url", `"*" to accept any audience`)
	for aud, checked := range map[string]string{"hub": "hub", "'*'": ""} {
		cfg, err := cfgLoad(t, nil, "--config", cfgFile(t, "auth:\n  jwks_url: https://sso.example.com/certs\n  audience: "+aud+"\n"))
		if err != nil || cfg.Auth.CheckedAudience() != checked {
			t.Errorf("Load(jwks_url, audience %s) = %v, checked audience %q; want accepted, %q", aud, err, cfg.Auth.CheckedAudience(), checked)
		}
	}
	if _, err := cfgLoad(t, nil, "--config", cfgFile(t, "auth:\n  hmac_secret: 0123456789abcdef0123456789abcdef\n")); err != nil {
		t.Errorf("Load(hmac_secret without audience) = %v; want accepted (the hub's own tokens)", err)
	}
}

// history.idempotency_ttl has a ceiling: records are kept at most 24h (the publish script refuses longer).
func TestConfigIdempotencyTTLCeiling(t *testing.T) {
	_, err := cfgLoad(t, map[string]string{"HUB_HISTORY_IDEMPOTENCY_TTL": "25h"})
	cfgErrHas(t, "Load(idempotency_ttl 25h)", err, "history.idempotency_ttl: must be 1ms to 24h0m0s")
	if cfg, err := cfgLoad(t, map[string]string{"HUB_HISTORY_IDEMPOTENCY_TTL": "24h"}); err != nil || cfg.History.IdempotencyTTL.Hours() != 24 {
		t.Errorf("Load(idempotency_ttl 24h) = %v, %v; want accepted", cfg.History.IdempotencyTTL, err)
	}
}
