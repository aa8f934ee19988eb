package config

import (
	"strings"
	"testing"
	"time"
)

// A webhook the hub could never reach, or a rule that covers nothing, stops the hub at start with every problem
// named, instead of failing at 3 a.m. when the first workflow stalls.
func TestConfigWorkflowsAndWebhooksAreCheckedAtStart(t *testing.T) {
	path := cfgFile(t, `
workflows:
  stall_after: 30s
  rules:
    - {topics: "deploy.*", stall_after: 10m}
    - {topics: "a*b", stall_after: 1m}
    - {topics: "ci.*", stall_after: 0s}
notify:
  webhooks:
    - {url: "https://hooks.example.com/hub", secret: s, format: slack, kinds: [failed, stalled], topics: ["deploy.*"]}
    - {url: "ftp://hooks.example.com/x"}
    - {url: "https://user:pass@hooks.example.com/x"}
    - {url: "https://hooks.example.com/y", format: xml, kinds: [paged]}
  timeout: 10s
  claim_after: 15s
`)
	_, err := cfgLoad(t, map[string]string{"HUB_NOTIFY_WEBHOOK_URL": "hooks.example.com/no-scheme"}, "--config", path)
	cfgErrHas(t, "Load(bad workflows and webhooks)", err,
		"workflows.rules[1]", "workflows.rules[2]: stall_after must be positive",
		"notify.webhooks[1]: url", "scheme must be http or https",
		"notify.webhooks[2]", "credentials belong in secret",
		"notify.webhooks[3]", `format "xml"`,
		"notify.webhook (HUB_NOTIFY_WEBHOOK_URL)",
		"notify.claim_after: 15s must be at least twice notify.timeout")
	if err != nil && strings.Contains(err.Error(), "pass") {
		t.Errorf("Load error %q repeats the webhook's password", err)
	}

	cfg, err := cfgLoad(t, map[string]string{
		"HUB_WORKFLOWS_STALL_AFTER": "2m", "HUB_NOTIFY_WEBHOOK_URL": "https://hooks.example.com/env",
		"HUB_NOTIFY_WEBHOOK_SECRET": "s3cret", "HUB_NOTIFY_WEBHOOK_FORMAT": "slack",
	})
	if err != nil {
		t.Fatalf("Load(one webhook from HUB_NOTIFY_WEBHOOK_*) = %v", err)
	}
	hooks := cfg.Notify.All()
	if cfg.Workflows.StallAfter != 2*time.Minute || len(hooks) != 1 || hooks[0].URL != "https://hooks.example.com/env" ||
		hooks[0].Secret != "s3cret" || hooks[0].Format != "slack" {
		t.Errorf("Load(HUB_WORKFLOWS_STALL_AFTER, HUB_NOTIFY_WEBHOOK_*) = stall_after %v, webhooks %+v", cfg.Workflows.StallAfter, hooks)
	}
}
