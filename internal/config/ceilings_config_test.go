package config

import "testing"

// The ceilings on workflow state and notifications load from config.yaml and HUB_*, and a value that would lift or
// break one stops the hub at start, named.
func TestConfigWorkflowAndNotifyCeilings(t *testing.T) {
	cfg, err := cfgLoad(t, map[string]string{
		"HUB_WORKFLOWS_MAX_TOPIC_WORKFLOWS": "50", "HUB_WORKFLOWS_MAX_TOPIC_STATE_BYTES": "1048576",
		"HUB_WORKFLOWS_MAX_WORKFLOWS": "500", "HUB_NOTIFY_MAX_PENDING": "20", "HUB_NOTIFY_MAX_DATA_BYTES": "512",
		"HUB_NOTIFY_WORKERS": "2",
	})
	if err != nil {
		t.Fatalf("Load(ceilings from HUB_*) = %v", err)
	}
	w, n := cfg.Workflows, cfg.Notify
	if w.MaxTopicWorkflows != 50 || w.MaxTopicStateBytes != 1<<20 || w.MaxWorkflows != 500 || n.MaxPending != 20 ||
		n.MaxDataBytes != 512 || n.Workers != 2 {
		t.Errorf("Load(ceilings from HUB_*) = workflows %+v, notify max_pending %d max_data_bytes %d workers %d",
			w, n.MaxPending, n.MaxDataBytes, n.Workers)
	}
	def := Default()
	if def.Workflows.MaxTopicWorkflows != 1000 || def.Workflows.MaxTopicStateBytes != 8<<20 ||
		def.Workflows.MaxWorkflows != 100000 || def.Notify.MaxPending != 1000 || def.Notify.MaxDataBytes != 4096 ||
		def.Notify.Workers != 4 {
		t.Errorf("Default() ceilings = workflows %+v, notify %+v", def.Workflows, def.Notify)
	}

	path := cfgFile(t, `
workflows:
  max_topic_workflows: 2000
  max_topic_state_bytes: 0
  max_workflows: 1000
notify:
  max_pending: -1
  max_data_bytes: 100
  workers: 0
`)
	_, err = cfgLoad(t, nil, "--config", path)
	cfgErrHas(t, "Load(bad ceilings)", err,
		"workflows.max_topic_state_bytes: must be positive",
		"workflows.max_topic_workflows: 2000 must be at most workflows.max_workflows (1000)",
		"notify.max_pending: must be positive",
		"notify.max_data_bytes: 100 must be at least 256",
		"notify.workers: 0 must be from 1 to 64")
}
