package pubsub

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestNewClientTopologies(t *testing.T) {
	tests := []struct {
		url  string
		want string // the client's type
		addr []string
		db   int
	}{
		{url: "redis://127.0.0.1:6379/2", want: "*redis.Client", addr: []string{"127.0.0.1:6379"}, db: 2},
		{url: "rediss://user:pw@redis.example:6380", want: "*redis.Client", addr: []string{"redis.example:6380"}},
		{url: "redis://10.0.0.1:7000,10.0.0.2:7000", want: "*redis.ClusterClient", addr: []string{"10.0.0.1:7000", "10.0.0.2:7000"}},
		{url: "redis+cluster://10.0.0.1:7000", want: "*redis.ClusterClient", addr: []string{"10.0.0.1:7000"}},
		{url: "redis+cluster://:pw@a:1,b:2,c/?dial_timeout=2s", want: "*redis.ClusterClient", addr: []string{"a:1", "b:2", "c:6379"}},
		{url: "rediss+cluster://a:1,b:2/", want: "*redis.ClusterClient", addr: []string{"a:1", "b:2"}},
		{url: "redis+sentinel://s1:26379,s2/mymaster", want: "*redis.Client", addr: []string{"s1:26379", "s2:26379"}},
		{url: "redis+sentinel://:pw@s1:26379/mymaster/3?sentinel_password=spw", want: "*redis.Client", addr: []string{"s1:26379"}, db: 3},
	}
	for _, tt := range tests {
		c, err := NewClient(tt.url)
		if err != nil {
			t.Errorf("NewClient(%q) = %v, want a client", tt.url, err)
			continue
		}
		got := strings.TrimPrefix(typeName(c), "")
		if got != tt.want {
			t.Errorf("NewClient(%q) = %s, want %s", tt.url, got, tt.want)
		}
		if cc, ok := c.(*redis.ClusterClient); ok {
			if a := cc.Options().Addrs; strings.Join(a, ",") != strings.Join(tt.addr, ",") {
				t.Errorf("NewClient(%q) cluster addrs = %v, want %v", tt.url, a, tt.addr)
			}
		}
		if rc, ok := c.(*redis.Client); ok && rc.Options().DB != tt.db {
			t.Errorf("NewClient(%q) db = %d, want %d", tt.url, rc.Options().DB, tt.db)
		}
		_ = c.Close()
	}
}

func TestFailoverOptionsFromURL(t *testing.T) {
	u, err := splitURL("redis+sentinel://app:p%40ss@s1:26379,s2:26380/mymaster/3?sentinel_password=spw&dial_timeout=2s")
	if err != nil {
		t.Fatal(err)
	}
	opt, err := u.failoverOptions()
	if err != nil {
		t.Fatalf("failoverOptions() = %v", err)
	}
	if opt.MasterName != "mymaster" || opt.DB != 3 || opt.Username != "app" || opt.Password != "p@ss" ||
		opt.SentinelPassword != "spw" || strings.Join(opt.SentinelAddrs, ",") != "s1:26379,s2:26380" ||
		opt.DialTimeout.String() != "2s" {
		t.Errorf("failoverOptions() = master %q db %d user %q password %q sentinel password %q addrs %v dial %v",
			opt.MasterName, opt.DB, opt.Username, opt.Password, opt.SentinelPassword, opt.SentinelAddrs, opt.DialTimeout)
	}
}

// Errors end up in logs: none may carry the password, however the URL is broken.
func TestNewClientErrorsHideThePassword(t *testing.T) {
	const pw = "s3cr3t-Pa55"
	bad := []string{
		"redis://:" + pw + "@host:6379/notadb",
		"redis://:" + pw + "@host:6379/0?bogus=1",
		"redis://:" + pw + "@ho st:6379/0",
		"redis://u:" + pw + "%zz@host:6379",
		"http://:" + pw + "@host:6379",
		"redis+cluster://:" + pw + "@a:1,b:2/5",
		"redis+cluster://:" + pw + "@a:1,b:2/?unknown=" + pw,
		"redis+sentinel://:" + pw + "@s1:26379",
		"redis+sentinel://:" + pw + "@s1:26379/m/x",
		"redis+sentinel://:" + pw + "@s1:26379/m?sentinel_password=" + pw + "&nope=1",
		"redis+sentinel://:" + pw + "@s1:26379/m?password=" + pw + "&db=x",
		":" + pw + "@host",
		"redis://:" + pw + "@",
	}
	for _, raw := range bad {
		c, err := NewClient(raw)
		if err == nil {
			_ = c.Close()
			t.Errorf("NewClient(%q) = a client, want an error", raw)
			continue
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("NewClient(%q) error %q contains the password", raw, err)
		}
	}
}

func typeName(c redis.UniversalClient) string {
	switch c.(type) {
	case *redis.ClusterClient:
		return "*redis.ClusterClient"
	case *redis.Client:
		return "*redis.Client"
	}
	return "other"
}

// TestRedactURLHidesEverySecret: every place a Redis URL can carry a secret, none reaches the logged form (the
// root package once had its own redactor that kept ?password= and ?sentinel_password=).
func TestRedactURLHidesEverySecret(t *testing.T) {
	const secret = "s3cr3t-Pa55"
	for _, raw := range []string{
		"redis://:" + secret + "@127.0.0.1:6379/0",
		"redis://user:" + secret + "@127.0.0.1:6379/0",
		"rediss://user:" + secret + "@redis.example:6380",
		"redis://127.0.0.1:6379/0?password=" + secret,
		"redis://127.0.0.1:6379/0?dial_timeout=1s&password=" + secret,
		"redis+sentinel://:" + secret + "@10.0.0.1:26379,10.0.0.2:26379/mymaster",
		"redis+sentinel://10.0.0.1:26379,10.0.0.2:26379/mymaster?sentinel_password=" + secret,
		"redis+sentinel://:pw@10.0.0.1:26379/mymaster/0?sentinel_password=" + secret + "&password=" + secret,
		"redis+cluster://:" + secret + "@10.0.0.1:7000,10.0.0.2:7000",
		"redis://:" + secret + "@10.0.0.1:7000,10.0.0.2:7000",
		"unix://:" + secret + "@/run/redis.sock?db=0",
		"unix:///run/redis.sock?password=" + secret,
	} {
		got := RedactURL(raw)
		if strings.Contains(got, secret) {
			t.Errorf("RedactURL(%q) = %q, which shows the secret", raw, got)
		}
	}
}

func TestRedactURLKeepsWhereItPoints(t *testing.T) {
	for raw, want := range map[string]string{
		"": "",
		"redis://:pw@127.0.0.1:6379/0?password=x":            "redis://127.0.0.1:6379/0",
		"redis+sentinel://h1:26379,h2/m?sentinel_password=x": "redis+sentinel://h1:26379,h2:26379/m",
		"nonsense": "(unparsable redis URL)",
	} {
		if got := RedactURL(raw); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", raw, got, want)
		}
	}
}
