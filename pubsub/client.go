package pubsub

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"
)

// NewClient opens a client for a Redis URL, choosing the topology from its form:
//
//	redis://[user:password@]host:port[/db][?options]        one server (rediss:// for TLS; unix:// too)
//	redis://host1:port,host2:port[?options]                 Redis Cluster: several seed addresses
//	redis+cluster://[user:password@]host1:port[,host2:port][/][?options]
//	redis+sentinel://[user:password@]host:port[,host:port]/mastername[/db][?options]
//
// The rediss+cluster and rediss+sentinel forms use TLS. Options are go-redis's URL options (dial_timeout,
// read_timeout, pool_size, ...). For Sentinel, the URL's password authenticates to the master and its replicas;
// sentinel_password=… authenticates to the sentinels themselves. No error ever carries a password: URLs come
// from configuration and errors end up in logs.
func NewClient(rawURL string) (redis.UniversalClient, error) {
	u, err := splitURL(rawURL)
	if err != nil {
		return nil, err
	}
	switch {
	case u.sentinel:
		opt, err := u.failoverOptions()
		if err != nil {
			return nil, u.fail(err)
		}
		return redis.NewFailoverClient(opt), nil
	case u.cluster || len(u.hosts) > 1:
		if p := strings.Trim(u.path, "/"); p != "" && p != "0" {
			return nil, fmt.Errorf("redis.url %s: a cluster has only database 0", u.redacted())
		}
		opt, err := redis.ParseClusterURL(u.rebuild(u.hosts[0], u.userinfo, "", addrParams(u.hosts[1:])))
		if err != nil {
			return nil, u.fail(err)
		}
		return redis.NewClusterClient(opt), nil
	default:
		opt, err := redis.ParseURL(rawURL)
		if err != nil {
			return nil, u.fail(err)
		}
		return redis.NewClient(opt), nil
	}
}

// redisURL is a Redis URL cut into the parts net/url cannot hold: several hosts, and the topology in the scheme.
type redisURL struct {
	scheme   string // redis, rediss or unix, without the +cluster or +sentinel suffix
	cluster  bool
	sentinel bool
	userinfo string // as written, still escaped
	hosts    []string
	path     string
	query    string
	secrets  []string // what must never appear in an error
}

func splitURL(raw string) (*redisURL, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, errors.New("redis.url: not a URL (want redis://host:port, redis+cluster://… or redis+sentinel://…)")
	}
	u := &redisURL{scheme: strings.ToLower(scheme)}
	if base, ok := strings.CutSuffix(u.scheme, "+cluster"); ok {
		u.scheme, u.cluster = base, true
	} else if base, ok := strings.CutSuffix(u.scheme, "+sentinel"); ok {
		u.scheme, u.sentinel = base, true
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, rest = rest[:i], rest[i:]
	} else {
		rest = ""
	}
	rest, _, _ = strings.Cut(rest, "#")
	u.path, u.query, _ = strings.Cut(rest, "?")
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		u.userinfo, authority = authority[:i], authority[i+1:]
		u.secrets = append(u.secrets, u.userinfo)
		if _, pw, ok := strings.Cut(u.userinfo, ":"); ok && pw != "" {
			u.secrets = append(u.secrets, pw)
			if dec, err := url.PathUnescape(pw); err == nil {
				u.secrets = append(u.secrets, dec)
			}
		}
	}
	if q, err := url.ParseQuery(u.query); err == nil {
		for _, k := range []string{"password", "sentinel_password"} {
			if v := q.Get(k); v != "" {
				u.secrets = append(u.secrets, v, url.QueryEscape(v))
			}
		}
	}
	if u.scheme != "redis" && u.scheme != "rediss" && !(u.scheme == "unix" && !u.cluster && !u.sentinel) {
		return nil, fmt.Errorf("redis.url: unknown scheme %q (want redis, rediss, redis+cluster, redis+sentinel)", scheme)
	}
	if u.scheme == "unix" {
		return u, nil
	}
	for h := range strings.SplitSeq(authority, ",") {
		if h = strings.TrimSpace(h); h == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(h, u.defaultPort())
		}
		u.hosts = append(u.hosts, h)
	}
	if len(u.hosts) == 0 {
		return nil, fmt.Errorf("redis.url %s: no host", u.redacted())
	}
	return u, nil
}

func (u *redisURL) defaultPort() string {
	if u.sentinel {
		return "26379"
	}
	return "6379"
}

// RedactURL names a Redis URL for logs and errors: the scheme, hosts and path, never the user info or the query
// (which may hold password= or sentinel_password=). It is the only redactor of Redis URLs in the hub.
func RedactURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := splitURL(raw)
	if err != nil {
		return "(unparsable redis URL)"
	}
	return u.redacted()
}

// redacted names the URL in errors and logs: the scheme, hosts and path, never the user info or the query.
func (u *redisURL) redacted() string {
	s := u.scheme
	if u.cluster {
		s += "+cluster"
	} else if u.sentinel {
		s += "+sentinel"
	}
	return s + "://" + strings.Join(u.hosts, ",") + u.path
}

// fail wraps a parse error, rewording it when its text would reveal a secret (net/url quotes the whole URL).
func (u *redisURL) fail(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	for _, s := range u.secrets {
		if s != "" && strings.Contains(msg, s) {
			return fmt.Errorf("redis.url %s: %s", u.redacted(), strings.ReplaceAll(msg, s, "xxxxx"))
		}
	}
	return fmt.Errorf("redis.url %s: %w", u.redacted(), err)
}

// rebuild writes a one-host URL that go-redis's own parsers accept, with extra query parameters.
func (u *redisURL) rebuild(host, userinfo, path string, extra url.Values) string {
	var b strings.Builder
	b.WriteString(u.scheme + "://")
	if userinfo != "" {
		b.WriteString(userinfo + "@")
	}
	b.WriteString(host)
	b.WriteString(path)
	q := u.query
	if e := extra.Encode(); e != "" {
		if q != "" {
			q += "&"
		}
		q += e
	}
	if q != "" {
		b.WriteString("?" + q)
	}
	return b.String()
}

func addrParams(hosts []string) url.Values {
	v := url.Values{}
	for _, h := range hosts {
		v.Add("addr", h)
	}
	return v
}

// failoverOptions reads /mastername[/db] and the user info, which go-redis's failover URL would take as the
// sentinels' credentials; here they are the master's, as in the URLs other Redis clients accept.
func (u *redisURL) failoverOptions() (*redis.FailoverOptions, error) {
	parts := strings.FieldsFunc(u.path, func(r rune) bool { return r == '/' })
	if len(parts) == 0 || len(parts) > 2 {
		return nil, errors.New("want /mastername or /mastername/db after the sentinel addresses")
	}
	master, err := url.PathUnescape(parts[0])
	if err != nil {
		return nil, errors.New("bad master name")
	}
	path := ""
	if len(parts) == 2 {
		path = "/" + parts[1]
	}
	q, err := url.ParseQuery(u.query)
	if err != nil {
		return nil, errors.New("bad query")
	}
	sentinelPassword := q.Get("sentinel_password")
	q.Del("sentinel_password")
	plain := *u
	plain.query = q.Encode()
	extra := addrParams(u.hosts[1:])
	extra.Set("master_name", master)
	opt, err := redis.ParseFailoverURL(plain.rebuild(u.hosts[0], "", path, extra))
	if err != nil {
		return nil, err
	}
	if u.userinfo != "" {
		info, err := url.Parse("redis://" + u.userinfo + "@host")
		if err != nil || info.User == nil {
			return nil, errors.New("bad user info")
		}
		opt.Username = info.User.Username()
		opt.Password, _ = info.User.Password()
	}
	opt.SentinelPassword = sentinelPassword
	return opt, nil
}
