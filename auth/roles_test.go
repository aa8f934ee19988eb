package auth

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// keycloakRoles is what an operator writes in config.yaml under auth.roles.
var keycloakRoles = map[string]Grant{
	"operators": {Subscribe: []string{"*"}},
	"agents":    {Subscribe: []string{"project.*"}, Publish: []string{"project.*"}},
	"auditors":  {Subscribe: []string{"audit"}},
}

func signMap(t *testing.T, extra jwt.MapClaims) string {
	t.Helper()
	c := jwt.MapClaims{"sub": "ada", "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}
	for k, v := range extra {
		c[k] = v
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A token whose roles map to configured roles gets exactly those roles' patterns, besides its own hub grant.
func TestRolesClaimGrantsTheRolesPatterns(t *testing.T) {
	cases := []struct {
		name    string
		claim   string
		payload jwt.MapClaims
		want    Grant
	}{
		{"keycloak realm roles", "realm_access.roles",
			jwt.MapClaims{"realm_access": map[string]any{"roles": []string{"offline_access", "operators", "uma_authorization"}}},
			Grant{Subscribe: []string{"*"}}},
		{"two groups", "groups", jwt.MapClaims{"groups": []string{"agents", "auditors"}},
			Grant{Subscribe: []string{"project.*", "audit"}, Publish: []string{"project.*"}}},
		{"a space-separated string", "roles", jwt.MapClaims{"roles": "auditors agents"},
			Grant{Subscribe: []string{"audit", "project.*"}, Publish: []string{"project.*"}}},
		{"the hub claim and a role", "groups",
			jwt.MapClaims{"groups": []string{"auditors"}, "hub": map[string]any{"publish": []string{"ops"}, "subscribe": []string{"audit"}}},
			Grant{Subscribe: []string{"audit"}, Publish: []string{"ops"}}},
		{"only unknown roles", "groups", jwt.MapClaims{"groups": []string{"admins", "Operators"}}, Grant{}},
		{"no such claim", "realm_access.roles", jwt.MapClaims{"resource_access": map[string]any{}}, Grant{}},
		{"the path ends early", "realm_access.roles", jwt.MapClaims{"realm_access": "operators"}, Grant{}},
	}
	for _, c := range cases {
		v, err := NewVerifier(Config{HMACSecret: testSecret, RolesClaim: c.claim, Roles: keycloakRoles})
		if err != nil {
			t.Fatalf("NewVerifier: %v", err)
		}
		id, err := v.Verify(signMap(t, c.payload))
		if err != nil {
			t.Errorf("%s: Verify = %v", c.name, err)
			continue
		}
		if !slices.Equal(id.Grant.Subscribe, c.want.Subscribe) || !slices.Equal(id.Grant.Publish, c.want.Publish) {
			t.Errorf("%s: grant = %+v, want exactly %+v", c.name, id.Grant, c.want)
		}
	}
	v, _ := NewVerifier(Config{HMACSecret: testSecret, RolesClaim: "groups", Roles: keycloakRoles})
	for name, groups := range map[string]any{"numbers": []int{1, 2}, "an object": map[string]any{"operators": true}} {
		_, err := v.Verify(signMap(t, jwt.MapClaims{"groups": groups}))
		var ae *Error
		if !errors.As(err, &ae) || ae.Reason != ReasonBadToken || !strings.Contains(err.Error(), "claim groups: want a list of role names") {
			t.Errorf("Verify(groups = %s) = %v, want refused naming the claim", name, err)
		}
	}
	// Without roles_claim, the same claims grant nothing: only the hub claim counts.
	plain, _ := NewVerifier(Config{HMACSecret: testSecret})
	if id, err := plain.Verify(signMap(t, jwt.MapClaims{"groups": []string{"operators"}})); err != nil || len(id.Grant.Subscribe) != 0 {
		t.Errorf("Verify without roles_claim = %+v, %v, want an empty grant", id, err)
	}
}

func TestRolesConfigIsChecked(t *testing.T) {
	for name, cfg := range map[string]Config{
		"bad pattern": {HMACSecret: testSecret, RolesClaim: "groups", Roles: map[string]Grant{"ops": {Subscribe: []string{"a*b"}}}},
		"empty step":  {HMACSecret: testSecret, RolesClaim: "realm_access..roles", Roles: keycloakRoles},
	} {
		if _, err := NewVerifier(cfg); err == nil || !strings.Contains(err.Error(), "auth.roles") {
			t.Errorf("NewVerifier(%s) = %v, want refused naming auth.roles…", name, err)
		}
	}
}

// FuzzRoleNames: whatever JSON a verified token's payload holds, reading its roles claim never panics, and only a
// configured role adds patterns.
func FuzzRoleNames(f *testing.F) {
	f.Add(`{"realm_access":{"roles":["operators","x"]}}`)
	f.Add(`{"realm_access":{"roles":"agents operators"}}`)
	f.Add(`{"realm_access":[1,{"roles":null}]}`)
	f.Add(`{"realm_access":{"roles":[1,"operators"]}}`)
	m, err := newRoleMap("realm_access.roles", keycloakRoles)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		raw := "e30." + base64.RawURLEncoding.EncodeToString([]byte(payload)) + ".c2ln"
		g, err := m.grant(raw, Grant{})
		if err != nil {
			return
		}
		for _, p := range append(g.Subscribe, g.Publish...) {
			if !slices.Contains([]string{"*", "project.*", "audit"}, p) {
				t.Fatalf("grant(%q) = %+v: pattern %q comes from no configured role", payload, g, p)
			}
		}
	})
}

// FuzzMaxAge: any Cache-Control header gives a max-age that is zero or positive, never a panic.
func FuzzMaxAge(f *testing.F) {
	f.Add("public, max-age=300")
	f.Add(`max-age="5", no-cache`)
	f.Add("max-age=99999999999999999999")
	f.Fuzz(func(t *testing.T, h string) {
		if d := maxAge([]string{h}); d < 0 {
			t.Fatalf("maxAge(%q) = %v, want >= 0", h, d)
		}
	})
}
