package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syncverse/hub/e2e/hubtest"
	"github.com/syncverse/hub/internal/config"
	"github.com/syncverse/hub/internal/rig"
	"github.com/syncverse/hub/pubsub"
)

// The agents in other languages run the hub's own script file, not a copy of it that could drift: the shell agent
// reads pubsub/publish.lua, the Python agent publishes with the Python package, which ships that file.
func TestExamplesReadThePublishScript(t *testing.T) {
	for f, uses := range map[string][]string{
		"examples/shell/publish.sh": {"/pubsub/publish.lua"},
		"examples/python/agent.py":  {"import syncverse_hub", "syncverse_hub.Publisher("},
	} {
		b := hubtest.ReadFile(t, f)
		for _, u := range uses {
			if !strings.Contains(string(b), u) {
				t.Errorf("%s does not contain %q: it should run pubsub/publish.lua", f, u)
			}
		}
		if strings.Contains(string(b), "redis.call(") {
			t.Errorf("%s carries script code of its own; it should run pubsub/publish.lua", f)
		}
	}
}

// The Python package ships the publish script as package data: a copy of pubsub/publish.lua, which must be the same
// bytes (clients/python's tests check the same, and that a built wheel carries it).
func TestPythonClientShipsThePublishScript(t *testing.T) {
	const copied = "clients/python/src/syncverse_hub/publish.lua"
	got := hubtest.ReadFile(t, copied)
	if string(got) != pubsub.PublishScript {
		t.Errorf("%s differs from pubsub/publish.lua; copy it again: cp pubsub/publish.lua %s", copied, copied)
	}
	const loader = "clients/python/src/syncverse_hub/script.py"
	if b, err := os.ReadFile(loader); err != nil || !strings.Contains(string(b), `joinpath("publish.lua")`) {
		t.Errorf("%s does not load publish.lua (%v)", loader, err)
	}
}

// The Python, shell and Go agents each report a workflow against a real Redis, and one SSE client of the hub
// sees every workflow from its first event to succeeded, in order; the Go agent's lease shows up as lock events.
func TestExampleAgentsReachSSEClient(t *testing.T) {
	hubtest.NeedTool(t, "redis-cli", "sh", "go")
	python := pythonWithRedis(t)
	rs := rig.StartRedisWith(t, rig.RedisOptions{})
	h := hubtest.Start(t, rs)
	const topic = "examples"
	stream := rig.OpenStream(t, h.URL, rig.TopicQuery(topic), "0-0")

	// The Python agent imports the package from the work tree, as `pip install ./clients/python` would provide it.
	pkg, err := filepath.Abs(filepath.Join("clients", "python", "src"))
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HUB_REDIS_URL="+rs.URL(), "HUB_REDIS_PREFIX="+h.Prefix, "AGENT_STEP_DELAY=0.05",
		"PYTHONPATH="+pkg)
	bin := filepath.Join(t.TempDir(), "agent")
	if out, err := exec.Command("go", "build", "-o", bin, "./examples/go/agent").CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/go/agent: %v\n%s", err, out)
	}
	agents := map[string][]string{
		"wf-py": {python, "examples/python/agent.py", topic, "wf-py"},
		"wf-sh": {"sh", "examples/shell/publish.sh", topic, "wf-sh"},
		"wf-go": {bin, "-topic", topic, "-workflow", "wf-go", "-entity", "examples-entity", "-step-delay", "50ms"},
	}
	var wg sync.WaitGroup
	for wf, argv := range agents {
		wg.Go(func() {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("agent %s (%s): %v\n%s", wf, strings.Join(argv, " "), err, out)
			} else if id := strings.TrimSpace(string(out)); !strings.Contains(id, "-") {
				t.Errorf("agent %s printed %q, want the last event's id", wf, id)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	last := map[string]agentProgress{}
	locks := []string{}
	deadline := time.Now().Add(20 * time.Second)
	for len(last) < 3 || !allSucceeded(last) || len(locks) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("after 20s: last progress per workflow %+v, lock states %v", last, locks)
		}
		f := stream.NextEvent(time.Until(deadline))
		var p agentProgress
		if err := json.Unmarshal([]byte(f.Data), &p); err != nil {
			t.Fatalf("event %s: %v", f.Data, err)
		}
		if f.Event == "lock" {
			locks = append(locks, p.State)
			continue
		}
		prev, seen := last[p.Workflow]
		if seen && (p.Progress < prev.Progress || prev.Status == "succeeded") {
			t.Fatalf("workflow %s: %+v after %+v, out of order", p.Workflow, p, prev)
		}
		last[p.Workflow] = p
	}
	for wf, agent := range map[string]string{"wf-py": "python", "wf-sh": "shell", "wf-go": "go"} {
		if last[wf].Agent != agent {
			t.Errorf("workflow %s came from agent %q, want %q", wf, last[wf].Agent, agent)
		}
	}
	if strings.Join(locks, ",") != "acquired,released" {
		t.Errorf("lock events of the Go agent = %v, want acquired, released", locks)
	}
}

// agentProgress is what the test reads of the agents' progress and lock events.
type agentProgress struct {
	Workflow, Status, Agent, Key, State string
	Progress                            float64
}

func allSucceeded(m map[string]agentProgress) bool {
	for _, p := range m {
		if p.Status != "succeeded" {
			return false
		}
	}
	return true
}

// pythonWithRedis finds a Python 3 that can import redis (Debian's python3-redis installs it for /usr/bin/python3).
func pythonWithRedis(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import redis").Run() == nil {
			return p
		}
	}
	rig.Missing(t, "python3-redis", "the Python examples do not run", "apt-get install -y python3-redis")
	return ""
}

// Every example agent publishes, without HUB_REDIS_URL, to the Redis that `go run . --demo` embeds, as `hub publish`
// does: a newcomer's first agent reaches the demo's console with no setting.
func TestExamplesDefaultToTheDemosRedis(t *testing.T) {
	want := "redis://" + config.Default().Redis.EmbeddedAddr + "/0"
	for _, path := range []string{"examples/shell/publish.sh", "examples/python/agent.py", "examples/go/agent/main.go"} {
		b := hubtest.ReadFile(t, path)
		if !strings.Contains(string(b), want) {
			t.Errorf("%s: default Redis is not %s (the demo's embedded Redis)", path, want)
		}
	}
}
