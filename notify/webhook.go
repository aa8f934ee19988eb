package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/workflow"
)

// Formats of a webhook's body.
const (
	FormatJSON  = "json"
	FormatSlack = "slack"
)

// Kinds lists every notification kind, the default of Webhook.Kinds.
var Kinds = []string{workflow.Failed, workflow.Stalled, workflow.Recovered, workflow.Duplicate}

// Webhook is one receiver of notifications (notify.webhooks in config.yaml).
type Webhook struct {
	URL    string   `yaml:"url"`
	Secret string   `yaml:"secret"`
	Format string   `yaml:"format"` // json (default) or slack
	Kinds  []string `yaml:"kinds"`  // the kinds it is told of; empty: all
	Topics []string `yaml:"topics"` // topic patterns (exact, or a prefix ending in *); empty: all
}

// Validate reports what is wrong with the webhook, so that a bad one stops the hub at start.
func (w Webhook) Validate() error {
	u, err := url.Parse(w.URL)
	switch {
	case w.URL == "":
		return errors.New("url is empty")
	case err != nil:
		return fmt.Errorf("url: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("url %q: scheme must be http or https", redact(u))
	case u.Host == "":
		return fmt.Errorf("url %q has no host", redact(u))
	case u.User != nil:
		return fmt.Errorf("url %q: credentials belong in secret, not in the url", redact(u))
	}
	if w.Format != "" && w.Format != FormatJSON && w.Format != FormatSlack {
		return fmt.Errorf("format %q: want json or slack", w.Format)
	}
	for _, k := range w.Kinds {
		if !slices.Contains(Kinds, k) {
			return fmt.Errorf("kind %q: want one of %s", k, strings.Join(Kinds, ", "))
		}
	}
	for _, p := range w.Topics {
		if err := hub.ValidatePattern(p); err != nil {
			return fmt.Errorf("topics: %w", err)
		}
	}
	return nil
}

// redact keeps a URL's scheme, host and path: its query may hold a token (Slack's URLs carry it in the path, so
// the path is cut to its first segment).
func redact(u *url.URL) string {
	first, _, _ := strings.Cut(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
	return u.Scheme + "://" + u.Host + "/" + first + "/…"
}

// Name identifies the webhook in the outbox: the same URL keeps its deliveries across restarts.
func (w Webhook) Name() string {
	sum := sha256.Sum256([]byte(w.URL))
	return hex.EncodeToString(sum[:8])
}

// wants reports whether the webhook is told of n.
func (w Webhook) wants(n workflow.Notification) bool {
	if len(w.Kinds) > 0 && !slices.Contains(w.Kinds, n.Kind) {
		return false
	}
	if len(w.Topics) == 0 {
		return true
	}
	return slices.ContainsFunc(w.Topics, func(p string) bool { return hub.Match(p, n.Topic) })
}

// body encodes n in the webhook's format.
func (w Webhook) body(n workflow.Notification) ([]byte, error) {
	if w.Format == FormatSlack {
		return json.Marshal(map[string]string{"text": slackText(n)})
	}
	return json.Marshal(n)
}

// sign is the X-Hub-Signature-256 header's value for body, "" without a secret.
func (w Webhook) sign(body []byte) string {
	if w.Secret == "" {
		return ""
	}
	mac := hmac.New(sha256.New, []byte(w.Secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// slackText says what happened in one line of Slack's mrkdwn.
func slackText(n workflow.Notification) string {
	var d struct {
		Title    string   `json:"title"`
		Step     string   `json:"step"`
		Message  string   `json:"message"`
		Progress *float64 `json:"progress"`
	}
	_ = workflow.DecodeExact(n.Data, &d) // data of another shape says nothing more
	icon := map[string]string{workflow.Failed: ":x:", workflow.Stalled: ":hourglass:",
		workflow.Recovered: ":white_check_mark:", workflow.Duplicate: ":warning:"}[n.Kind]
	var b strings.Builder
	fmt.Fprintf(&b, "%s *%s*: workflow `%s` on topic `%s`", icon, n.Kind, escape(n.Workflow), escape(n.Topic))
	if d.Title != "" {
		fmt.Fprintf(&b, " (%s)", escape(d.Title))
	}
	if d.Step != "" {
		fmt.Fprintf(&b, ", step %s", escape(d.Step))
	}
	if d.Progress != nil {
		fmt.Fprintf(&b, ", %.0f%%", *d.Progress*100)
	}
	if d.Message != "" {
		fmt.Fprintf(&b, ": %s", escape(d.Message))
	}
	if n.Coalesced > 1 {
		fmt.Fprintf(&b, " (and %d more %s on this topic)", n.Coalesced-1, n.Kind)
	}
	return b.String()
}

// escape keeps Slack from reading text as markup or links.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
