package config

import (
	"testing"

	"github.com/syncverse/hub/internal/eventschema"
)

// events.validation is warn by default, set by the file or HUB_EVENTS_VALIDATION (which wins), and a value that is
// no mode is refused in the file's words, naming the three there are.
func TestConfigEventsValidation(t *testing.T) {
	if d := Default().Events.Validation; d != eventschema.Warn {
		t.Errorf("default events.validation = %q, want warn", d)
	}
	strict := cfgFile(t, "events:\n  validation: strict\n")
	for _, c := range []struct {
		env  map[string]string
		args []string
		want eventschema.Mode
	}{
		{nil, []string{"--config", strict}, eventschema.Strict},
		{map[string]string{"HUB_EVENTS_VALIDATION": "off"}, []string{"--config", strict}, eventschema.Off},
		{map[string]string{"HUB_EVENTS_VALIDATION": "warn"}, nil, eventschema.Warn},
	} {
		cfg, err := cfgLoad(t, c.env, c.args...)
		if err != nil || cfg.Events.Validation != c.want {
			t.Errorf("Load(%v, %v): events.validation %q, %v; want %q", c.env, c.args, cfg.Events.Validation, err, c.want)
		}
	}
	const want = `events.validation: "maybe" is not off, warn or strict`
	_, err := cfgLoad(t, nil, "--config", cfgFile(t, "events:\n  validation: maybe\n"))
	if err == nil || err.Error() != want {
		t.Errorf("Load(events.validation: maybe) = %v, want %q", err, want)
	}
	_, err = cfgLoad(t, map[string]string{"HUB_EVENTS_VALIDATION": "Strict"})
	cfgErrHas(t, "Load(HUB_EVENTS_VALIDATION=Strict)", err, `events.validation: "Strict" is not off, warn or strict`)
	_, err = cfgLoad(t, nil, "--config", cfgFile(t, "events:\n  validaton: strict\n"))
	cfgErrHas(t, "Load(events.validaton)", err, "unknown key events.validaton (did you mean events.validation?)")
}
