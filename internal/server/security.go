package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/syncverse/hub/auth"
	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/limits"
	"github.com/syncverse/hub/pubsub"
	"github.com/syncverse/hub/sse"
)

// Security holds who may do what and how much: it authenticates requests, checks grants against topics and
// enforces the connection, rate and origin limits. Every refusal is counted once, by reason.
type Security struct {
	authn    *auth.Authenticator
	conns    *limits.Conns
	rate     *limits.Rate
	cors     *limits.CORS
	proxies  limits.Proxies
	rejected *prometheus.CounterVec
	guards                  // the connection-level and request-shape limits (guard.go)
	log      zerolog.Logger // each refusal is logged here at info
}

// identityKey is where the authenticated identity waits in an echo context.
const identityKey = "hub.identity"

// NewSecurity builds the auth and limits of cfg and registers hub_http_rejected_total with reg; each refusal is
// logged to log at info.
func NewSecurity(cfg config.Config, reg prometheus.Registerer, log zerolog.Logger) (*Security, error) {
	var errs []error
	s := &Security{
		authn: &auth.Authenticator{
			Anonymous: cfg.Auth.AnonymousAllowed(),
			Extractor: auth.Extractor{Cookie: cfg.Auth.CookieName, AllowQuery: cfg.Auth.AllowQueryToken, ProxyHeader: cfg.Auth.ProxyHeader},
		},
		conns: limits.NewConns(cfg.Limits.MaxConnections, cfg.Limits.MaxConnectionsPerIP),
		rate:  limits.NewRate(cfg.Limits.PublishRate, cfg.Limits.PublishBurst),
		log:   log,
	}
	if !cfg.Auth.Configured() && !cfg.Auth.AnonymousAllowed() {
		errs = append(errs, errors.New("auth.anonymous is false but no key is configured, so no client could connect: "+
			"set auth.hmac_secret, auth.public_key_file, auth.jwks_file or auth.jwks_url"))
	}
	if cfg.Auth.Configured() {
		v, err := newVerifier(cfg.Auth, reg, log)
		errs = append(errs, err)
		s.authn.Verifier = v
	}
	var err error
	s.cors, err = limits.NewCORS(cfg.CORS.AllowedOrigins)
	errs = append(errs, err)
	s.proxies, err = limits.ParseProxies(cfg.Limits.TrustedProxies)
	errs = append(errs, err)
	s.authn.Extractor.FromProxy = s.proxies.Trusts // auth.proxy_header is believed from limits.trusted_proxies only
	errs = append(errs, s.guards.init(cfg, s))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s.rejected = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hub_http_rejected_total",
		Help: "Requests refused by authentication, authorization or a limit, by reason.",
	}, []string{"reason"})
	for _, r := range auth.Reasons {
		s.rejected.WithLabelValues(string(r))
	}
	for _, r := range limits.Reasons {
		s.rejected.WithLabelValues(r)
	}
	reg.MustRegister(s.rejected)
	return s, nil
}

// LogMode says at start how clients are admitted, so an operator never has to guess.
func (s *Security) LogMode(log zerolog.Logger, cfg config.Config) {
	ev := log.Info()
	if s.authn.Anonymous && !config.IsLoopback(cfg.Listen) {
		ev = log.Warn().Str("note", "auth.anonymous is on for a non-loopback listen: every client may read and publish every topic")
	}
	var algs []string
	if s.authn.Verifier != nil {
		algs = s.authn.Verifier.Algorithms()
	}
	ev.Bool("anonymous", s.authn.Anonymous).Strs("algorithms", algs).Bool("query_token", cfg.Auth.AllowQueryToken).
		Str("jwks_url", cfg.Auth.JWKSURL).Str("roles_claim", cfg.Auth.RolesClaim).Str("proxy_header", cfg.Auth.ProxyHeader).
		Strs("cors", cfg.CORS.AllowedOrigins).Msg("auth")
}

// refuse counts and logs err and turns it into the JSON error answer, with the headers that tell a client what to
// do next.
func (s *Security) refuse(c echo.Context, err error) *echo.HTTPError {
	id, _ := c.Get(identityKey).(*auth.Identity)
	s.count(c.Request(), id, err)
	r := refusal{err}
	r.SetHeaders(c.Response().Header())
	if r.Status() == http.StatusInternalServerError {
		return echo.NewHTTPError(http.StatusInternalServerError, "internal error")
	}
	return echo.NewHTTPError(r.Status(), err.Error())
}

// refusal is an auth or limits refusal with its status and headers, in the shape the /events handler answers.
type refusal struct{ error }

func (r refusal) Unwrap() error { return r.error }

func (r refusal) Status() int {
	var st interface{ Status() int }
	if errors.As(r.error, &st) {
		return st.Status()
	}
	return http.StatusInternalServerError
}

// SetHeaders adds the 401 challenge or the Retry-After hint.
func (r refusal) SetHeaders(h http.Header) {
	var ae *auth.Error
	var lr *limits.Refusal
	switch {
	case errors.As(r.error, &ae) && ae.Status() == http.StatusUnauthorized:
		h.Set("WWW-Authenticate", `Bearer realm="hub"`)
	case errors.As(r.error, &lr):
		lr.SetHeaders(h)
	}
}

// count adds a refusal to hub_http_rejected_total by its reason and logs it at info with the subject when one is
// known (id's, or an expired token's): never the token, nor the query, which may hold one.
func (s *Security) count(r *http.Request, id *auth.Identity, err error) {
	var ae *auth.Error
	var lr *limits.Refusal
	reason, subject := "", ""
	switch {
	case errors.As(err, &ae):
		reason, subject = string(ae.Reason), ae.Subject
	case errors.As(err, &lr):
		reason = lr.Reason
	default:
		return
	}
	if id != nil && subject == "" {
		subject = id.Subject
	}
	s.rejected.WithLabelValues(reason).Inc()
	s.log.Info().Str("reason", reason).Str("subject", subject).Str("method", r.Method).Str("path", r.URL.Path).
		Str("remote", s.proxies.ClientIP(r).String()).Msg("request refused")
}

// crossOrigin runs before routing, so a preflight is answered whatever the path.
func (s *Security) crossOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		done, err := s.cors.Check(c.Request(), c.Response().Header())
		if err != nil {
			return s.refuse(c, err)
		}
		if done {
			return c.NoContent(http.StatusNoContent)
		}
		return next(c)
	}
}

// authenticate admits a request with valid credentials (or none, when anonymous access is on).
func (s *Security) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := s.authn.Authenticate(c.Request())
		if err != nil {
			return s.refuse(c, err)
		}
		c.Set(identityKey, id)
		return next(c)
	}
}

func identity(c echo.Context) *auth.Identity {
	id, _ := c.Get(identityKey).(*auth.Identity)
	if id == nil {
		return &auth.Identity{} // a route wired without authenticate grants nothing
	}
	return id
}

// authorizeTopic lets /topics/{topic}/... through only for a topic the identity may subscribe to. A malformed topic
// goes on to the handler, which answers 400 for it.
func (s *Security) authorizeTopic(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		topic := pathTopic(c)
		if hub.ValidateTopic(topic) == nil {
			if err := identity(c).Grant.CheckSubscribe([]string{topic}); err != nil {
				return s.refuse(c, err)
			}
		}
		return next(c)
	}
}

// limitPublish applies the publish rate per token, or per client address for anonymous requests.
func (s *Security) limitPublish(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		key := identity(c).Key
		if key == "" {
			key = "ip:" + s.proxies.ClientIP(c.Request()).String()
		}
		if err := s.rate.Allow(key); err != nil {
			return s.refuse(c, err)
		}
		return next(c)
	}
}

// checkPublish is the publish grant, checked once the body has named the topic. A malformed topic passes on to the
// publisher, which refuses it with a 400 that says what is actually wrong.
func (s *Security) checkPublish(c echo.Context, topic string) error {
	if hub.ValidateTopic(topic) != nil {
		return nil
	}
	if err := identity(c).Grant.CheckPublish(topic); err != nil {
		return s.refuse(c, err)
	}
	return nil
}

// visibleTopics keeps the topics the identity may subscribe to: topic names are themselves worth protecting.
func (s *Security) visibleTopics(c echo.Context, list []pubsub.TopicInfo) []pubsub.TopicInfo {
	g := identity(c).Grant
	kept := list[:0]
	for _, t := range list {
		if g.CanSubscribe(t.Name) {
			kept = append(kept, t)
		}
	}
	return kept
}

// AdmitStream is sse.Config.Admit: the edge's checks of an /events request, which is mounted ahead of echo. It answers
// cross-origin requests as crossOrigin does, takes from the address's connection rate, and holds a connection slot
// for as long as the stream is open; it runs before the handler's own checks, so a refused request releases its
// slot at once. While the stream runs, its connection does not count as one without a stream.
func (s *Security) AdmitStream(w http.ResponseWriter, r *http.Request) (release func(), err error) {
	if _, err := s.cors.Check(r, w.Header()); err != nil { // a GET is never a preflight
		s.count(r, nil, err)
		return nil, err
	}
	ip := s.proxies.ClientIP(r)
	if err := s.connRate.AllowAddr(ip); err != nil {
		s.count(r, nil, err)
		return nil, err
	}
	slot, err := s.conns.Acquire(ip)
	if err != nil {
		s.count(r, nil, err) // the sse handler answers it: the error carries its status and headers
		return nil, err
	}
	streamEnd := s.peers.Stream(r)
	return func() { slot(); streamEnd() }, nil
}

// AuthorizeStream is sse.Config.Authorize: the request's identity must cover every topic, and the stream ends when
// its token does. To presence the stream is its token's subject (anonymous without one), who sees the users
// watching the topics its presence grant covers.
func (s *Security) AuthorizeStream(r *http.Request, topics []string) (sse.Access, error) {
	id, err := s.authn.Authenticate(r)
	if err == nil {
		err = id.Grant.CheckSubscribe(topics)
	}
	if err != nil {
		s.count(r, id, err) // the sse handler answers it: the error carries its status and headers
		return sse.Access{}, refusal{err}
	}
	return sse.Access{Until: id.Expires, Viewer: hub.Viewer{User: id.Subject, SeeUsers: id.Grant.CanSeePresence}}, nil
}
