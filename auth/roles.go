package auth

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// roleMap grants patterns by role, read from a standard claim (groups, roles, realm_access.roles), so a plain
// access token from an identity provider works without the hub's own "hub" claim.
type roleMap struct {
	claim string   // as configured, for errors
	path  []string // claim split at dots: realm_access.roles is {"realm_access": {"roles": [...]}}
	roles map[string]Grant
}

func newRoleMap(claim string, roles map[string]Grant) (roleMap, error) {
	if claim == "" {
		return roleMap{}, nil
	}
	path := strings.Split(claim, ".")
	if slices.Contains(path, "") {
		return roleMap{}, fmt.Errorf("auth.roles_claim %q: want a claim name or a dotted path such as realm_access.roles", claim)
	}
	for name, g := range roles {
		if err := g.Validate(); err != nil {
			return roleMap{}, fmt.Errorf("auth.roles.%s: %w", name, err)
		}
	}
	return roleMap{claim: claim, path: path, roles: roles}, nil
}

// grant adds to own the patterns of every configured role the verified token raw names. A role the hub does not
// know grants nothing; a roles claim that is not a list of names (or one space-separated string) refuses the token.
func (m roleMap) grant(raw string, own Grant) (Grant, error) {
	if len(m.path) == 0 {
		return own, nil
	}
	names, err := m.names(raw)
	if err != nil {
		return Grant{}, refuse(ReasonBadToken, "invalid token: "+err.Error())
	}
	g := Grant{Subscribe: slices.Clone(own.Subscribe), Publish: slices.Clone(own.Publish), Presence: slices.Clone(own.Presence)}
	for _, n := range names {
		r, ok := m.roles[n]
		if !ok {
			continue
		}
		g.Subscribe = union(g.Subscribe, r.Subscribe)
		g.Publish = union(g.Publish, r.Publish)
		g.Presence = union(g.Presence, r.Presence)
	}
	return g, nil
}

// names reads the claim at m.path from raw's payload; raw has been verified, so its payload decodes.
func (m roleMap) names(raw string) ([]string, error) {
	parts := strings.Split(raw, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(payload, &v); err != nil {
		return nil, err
	}
	for _, step := range m.path {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, nil // the path does not exist in this token: no roles
		}
		if v, ok = obj[step]; !ok {
			return nil, nil
		}
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return strings.Fields(x), nil
	case []any:
		names := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("claim %s: want a list of role names, found a %T in it", m.claim, e)
			}
			names = append(names, s)
		}
		return names, nil
	}
	return nil, fmt.Errorf("claim %s: want a list of role names, found a %T", m.claim, v)
}

// union appends to a the entries of b it lacks.
func union(a, b []string) []string {
	for _, p := range b {
		if !slices.Contains(a, p) {
			a = append(a, p)
		}
	}
	return a
}
