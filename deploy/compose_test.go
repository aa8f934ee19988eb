package deploy_test

import (
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/config"
)

// No Docker engine runs where the tests do, so docker-compose.yml is checked for what decides whether
// `docker compose up` works and shows something: the files it mounts exist, the hub services run real hub commands
// with a configuration the hub accepts, a publisher feeds the trial, Redis is on the host's loopback only, and the
// monitoring profile's Prometheus loads the alert rules and scrapes the hubs while Grafana gets the dashboard.

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
	XHub     any                       `yaml:"x-hub"`
}

type composeService struct {
	Build           any               `yaml:"build"`
	Image           string            `yaml:"image"`
	Command         []string          `yaml:"command"`
	Environment     map[string]string `yaml:"environment"`
	DependsOn       any               `yaml:"depends_on"`
	StopGracePeriod string            `yaml:"stop_grace_period"`
	Restart         string            `yaml:"restart"`
	Ports           []string          `yaml:"ports"`
	Volumes         []string          `yaml:"volumes"`
	Healthcheck     map[string]any    `yaml:"healthcheck"`
	Profiles        []string          `yaml:"profiles"`
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true) // a misspelt key is an error, not a setting compose ignores
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

// hubServices are the services that run the hub's image.
func (c composeFile) hubServices() map[string]composeService {
	out := map[string]composeService{}
	for name, s := range c.Services {
		if s.Build != nil || strings.HasPrefix(s.Image, "syncverse/hub") {
			out[name] = s
		}
	}
	return out
}

func TestComposeHubServicesRunRealCommands(t *testing.T) {
	c := loadCompose(t)
	hubs := c.hubServices()
	if len(hubs) < 3 {
		t.Fatalf("docker-compose.yml runs the hub's image in %d services, want two replicas and a publisher", len(hubs))
	}
	known := config.EnvNames()
	var serving, publishing []string
	for name, s := range hubs {
		cmd := s.Command
		if cmd == nil {
			cmd = []string{"serve"} // the image's CMD
		}
		var stderr strings.Builder
		err := hubtest.Run(context.Background(), append(slices.Clone(cmd), "-h"), func(string) string { return "" }, strings.NewReader(""), io.Discard, &stderr, nil)
		if !errors.Is(err, flag.ErrHelp) {
			t.Errorf("service %s runs hub %s, which is not a hub command taking flags: run(%q -h) = %v, %s", name, strings.Join(cmd, " "), cmd, err, stderr.String())
		}
		for k := range s.Environment {
			if strings.HasPrefix(k, "HUB_") && !slices.Contains(known, k) {
				t.Errorf("service %s sets %s, which the hub does not read", name, k)
			}
		}
		env := s.Environment
		cfg, err := config.Load(flag.NewFlagSet(cmd[0], flag.ContinueOnError), nil, func(k string) string {
			if k == "HUB_LISTEN" { // the image's ENV
				return "0.0.0.0:8080"
			}
			return env[k]
		})
		if err != nil {
			t.Errorf("service %s: the hub refuses its environment: %v", name, err)
			continue
		}
		if !strings.HasPrefix(cfg.Redis.URL, "redis://redis:") {
			t.Errorf("service %s: redis.url %q, want the compose redis service (an empty one runs a private in-memory server)", name, cfg.Redis.URL)
		}
		if cfg.Log.Format != "json" {
			t.Errorf("service %s: log.format %q, want json: a log pipeline reads the container's output", name, cfg.Log.Format)
		}
		switch cmd[0] {
		case "serve":
			serving = append(serving, name)
			if err := cfg.CheckExposure(); err != nil {
				t.Errorf("service %s would not start: %v", name, err)
			}
			if grace, err := time.ParseDuration(s.StopGracePeriod); err != nil || grace <= cfg.ShutdownTimeout {
				t.Errorf("service %s: stop_grace_period %q, want more than shutdown_timeout %v", name, s.StopGracePeriod, cfg.ShutdownTimeout)
			}
		case "demo":
			publishing = append(publishing, name)
		}
	}
	if len(serving) < 2 || len(publishing) != 1 {
		t.Errorf("hub services: serving %v, publishing %v; want two replicas and one publisher (hub demo)", serving, publishing)
	}
}

func TestComposeMountsAndPorts(t *testing.T) {
	c := loadCompose(t)
	for name, s := range c.Services {
		for _, v := range s.Volumes {
			src, _, ok := strings.Cut(v, ":")
			if !ok || !strings.HasPrefix(src, "./") {
				if _, named := c.Volumes[src]; !named {
					t.Errorf("service %s mounts %q, neither a file of the repository nor a named volume", name, v)
				}
				continue
			}
			if _, err := os.Stat(src); err != nil {
				t.Errorf("service %s mounts %s: %v", name, src, err)
			}
		}
		for _, p := range s.Ports {
			if host, _, _ := strings.Cut(p, ":"); host != "127.0.0.1" {
				t.Errorf("service %s publishes %q on every interface; want 127.0.0.1 only (a local trial without auth)", name, p)
			}
		}
	}
	redis := c.Services["redis"]
	if !slices.ContainsFunc(redis.Ports, func(p string) bool { return strings.HasSuffix(p, ":6379") }) {
		t.Errorf("redis ports %v: the examples publish from the host to 127.0.0.1:6379", redis.Ports)
	}
}

// The monitoring profile: Prometheus gets its config next to the alert rules it names and scrapes every serving
// replica as job "hub" (what the rules select); Grafana gets a Prometheus data source and the dashboard file where its
// provider looks.
func TestComposeMonitoringProfile(t *testing.T) {
	c := loadCompose(t)
	prom, graf := c.Services["prometheus"], c.Services["grafana"]
	if !slices.Contains(prom.Profiles, "monitoring") || !slices.Contains(graf.Profiles, "monitoring") {
		t.Fatalf("prometheus profiles %v, grafana profiles %v; want both in monitoring", prom.Profiles, graf.Profiles)
	}
	mounts := func(s composeService) map[string]string { // container path → repository file
		m := map[string]string{}
		for _, v := range s.Volumes {
			parts := strings.Split(v, ":")
			m[parts[1]] = parts[0]
		}
		return m
	}
	pm := mounts(prom)
	var pcfg struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	src := pm["/etc/prometheus/prometheus.yml"]
	if err := yaml.Unmarshal(hubtest.ReadFile(t, src), &pcfg); err != nil || src == "" {
		t.Fatalf("prometheus config %q: %v", src, err)
	}
	for _, r := range pcfg.RuleFiles {
		if f := pm[path.Join("/etc/prometheus", r)]; f != "./deploy/prometheus-alerts.yml" {
			t.Errorf("prometheus rule file %s is mounted from %q, want ./deploy/prometheus-alerts.yml", r, f)
		}
	}
	var targets []string
	for _, sc := range pcfg.ScrapeConfigs {
		if sc.JobName == "hub" {
			for _, s := range sc.StaticConfigs {
				targets = append(targets, s.Targets...)
			}
		}
	}
	for name, s := range c.hubServices() {
		if s.Command != nil && s.Command[0] != "serve" {
			continue
		}
		if !slices.Contains(targets, net.JoinHostPort(name, "8080")) {
			t.Errorf("prometheus job hub scrapes %v, not %s:8080", targets, name)
		}
	}
	if len(pcfg.RuleFiles) == 0 {
		t.Error("prometheus loads no rule files")
	}
	promtool(t, "check", "config", src)

	gm := mounts(graf)
	prov := gm["/etc/grafana/provisioning"]
	var ds struct {
		Datasources []struct{ Type, URL string } `yaml:"datasources"`
	}
	var dash struct {
		Providers []struct {
			Options struct{ Path string } `yaml:"options"`
		} `yaml:"providers"`
	}
	if err := yaml.Unmarshal(hubtest.ReadFile(t, path.Join(prov, "datasources/prometheus.yml")), &ds); err != nil || len(ds.Datasources) != 1 ||
		ds.Datasources[0].Type != "prometheus" || ds.Datasources[0].URL != "http://prometheus:9090" {
		t.Errorf("grafana data sources %+v, %v; want prometheus at http://prometheus:9090", ds, err)
	}
	if err := yaml.Unmarshal(hubtest.ReadFile(t, path.Join(prov, "dashboards/hub.yml")), &dash); err != nil || len(dash.Providers) != 1 {
		t.Fatalf("grafana dashboard providers %+v, %v", dash, err)
	}
	if f := gm[path.Join(dash.Providers[0].Options.Path, "hub.json")]; f != "./deploy/grafana-dashboard.json" {
		t.Errorf("grafana's provider reads %s, where compose mounts %q; want ./deploy/grafana-dashboard.json", dash.Providers[0].Options.Path, f)
	}
	if _, err := exec.LookPath("promtool"); err != nil {
		t.Log("promtool not found: prometheus.yml was parsed but not checked")
	}
}
