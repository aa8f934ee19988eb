package server

import (
	"context"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/internal/config"
)

// newVerifier builds the token verifier of cfg. With auth.jwks_url it also registers the key set's metrics:
// hub_auth_jwks_refreshes_total by outcome and hub_auth_jwks_age_seconds (+Inf until the first good fetch, so an
// alert on the age fires for a hub that never got its keys).
func newVerifier(cfg config.AuthConfig, reg prometheus.Registerer, log zerolog.Logger) (*auth.Verifier, error) {
	ac := auth.Config{
		HMACSecret: []byte(cfg.HMACSecret), PublicKeyFile: cfg.PublicKeyFile, JWKSFile: cfg.JWKSFile,
		Issuer: cfg.Issuer, Audience: cfg.CheckedAudience(), ClockSkew: cfg.ClockSkew,
		JWKSURL: cfg.JWKSURL, JWKSRefresh: cfg.JWKSRefresh, RolesClaim: cfg.RolesClaim, Roles: cfg.Roles,
	}
	if cfg.JWKSURL == "" {
		return auth.NewVerifier(ac)
	}
	refreshes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hub_auth_jwks_refreshes_total",
		Help: "Fetches of auth.jwks_url, by outcome: ok, error (unreachable or not 200), invalid (not a usable key set).",
	}, []string{"outcome"})
	for _, o := range auth.RefreshOutcomes {
		refreshes.WithLabelValues(o)
	}
	ac.OnRefresh = func(outcome string) { refreshes.WithLabelValues(outcome).Inc() }
	ac.OnProblem = func(err error) { log.Warn().Err(err).Msg("identity provider key set") }
	v, err := auth.NewVerifier(ac)
	if err != nil {
		return nil, err
	}
	age := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "hub_auth_jwks_age_seconds",
		Help: "Age of the key set in force from auth.jwks_url; +Inf until the first good fetch.",
	}, func() float64 {
		t := v.KeysFetched()
		if t.IsZero() {
			return math.Inf(1)
		}
		return time.Since(t).Seconds()
	})
	unusable := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "hub_auth_jwks_unusable_keys",
		Help: "Signing keys of the auth.jwks_url set in force that the hub left out as unusable (unsupported alg or type, weak RSA); the log says why.",
	}, func() float64 { return float64(v.UnusableKeys()) })
	reg.MustRegister(refreshes, age, unusable)
	return v, nil
}

// Run keeps the identity provider's key set fresh (auth.jwks_url) until ctx ends; without one it returns at once.
func (s *Security) Run(ctx context.Context) error {
	if s.authn.Verifier != nil {
		s.authn.Verifier.Run(ctx)
	}
	return nil
}
