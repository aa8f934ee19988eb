package config

import (
	"fmt"
	"io"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/syncverse/hub/notify"
	"github.com/syncverse/hub/pubsub"
)

// masked is what a set secret is shown as.
const masked = "********"

// Describe prints every key with its value and where the value came from, one per line, secrets masked.
func (c Config) Describe(w io.Writer, src Sources) error {
	m := c.Masked()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tFROM")
	walk(reflect.ValueOf(&m).Elem(), "", func(key string, v reflect.Value) {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", key, show(v), src.Of(key))
	})
	return tw.Flush()
}

// Masked is the configuration with every secret hidden: the HMAC secret and webhook secrets replaced, the user info
// and query of Redis URLs dropped (pubsub.RedactURL), webhook URLs cut to their scheme and host, and the password of
// a key set URL masked.
func (c Config) Masked() Config {
	if c.Auth.HMACSecret != "" {
		c.Auth.HMACSecret = masked
	}
	c.Redis.URL = pubsub.RedactURL(c.Redis.URL)
	if u, err := url.Parse(c.Auth.JWKSURL); err == nil && u.User != nil {
		c.Auth.JWKSURL = u.Redacted() // an identity provider's URL may carry basic-auth credentials
	}
	c.Notify.Webhook = maskWebhook(c.Notify.Webhook)
	c.Notify.Webhooks = slices.Clone(c.Notify.Webhooks)
	for i := range c.Notify.Webhooks {
		c.Notify.Webhooks[i] = maskWebhook(c.Notify.Webhooks[i])
	}
	return c
}

func maskWebhook(w notify.Webhook) notify.Webhook {
	if w.Secret != "" {
		w.Secret = masked
	}
	if w.URL == "" {
		return w
	}
	if u, err := url.Parse(w.URL); err == nil && u.Host != "" {
		w.URL = u.Scheme + "://" + u.Host + "/" + masked // a Slack webhook's path is its credential
	} else {
		w.URL = masked
	}
	return w
}

// show is a value as config.yaml would spell it; lists and maps in YAML's flow style.
func show(v reflect.Value) string {
	switch {
	case v.Type() == durationType:
		return time.Duration(v.Int()).String()
	case v.Kind() == reflect.Pointer && v.IsNil():
		return "(unset)"
	case v.Kind() == reflect.String:
		if v.String() == "" {
			return `""`
		}
		return v.String()
	}
	var n yaml.Node
	if err := n.Encode(v.Interface()); err != nil {
		return fmt.Sprint(v.Interface())
	}
	flow(&n)
	out, err := yaml.Marshal(&n)
	if err != nil {
		return fmt.Sprint(v.Interface())
	}
	return strings.TrimSpace(string(out))
}

func flow(n *yaml.Node) {
	n.Style = yaml.FlowStyle
	for _, c := range n.Content {
		flow(c)
	}
}
