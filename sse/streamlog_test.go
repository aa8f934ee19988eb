package sse

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// Past the limit in one second, lines go to debug; the next info line reports how many were held back.
func TestStreamLogHoldsBackBeyondTheRateWithACount(t *testing.T) {
	for _, level := range []zerolog.Level{zerolog.InfoLevel, zerolog.DebugLevel} {
		var buf bytes.Buffer
		log := zerolog.New(&buf).Level(level)
		l := &streamLog{limit: 3}
		t0 := time.Unix(1000, 0)
		for i := range 10 {
			l.event(log, t0.Add(time.Duration(i)*time.Millisecond)).Int("i", i).Msg("stream opened")
		}
		l.event(log, t0.Add(1500*time.Millisecond)).Int("i", 10).Msg("stream opened")
		var infos, debugs int
		var last map[string]any
		for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			switch m["level"] {
			case "info":
				infos++
				last = m
			case "debug":
				debugs++
			}
		}
		wantDebug := 0
		if level == zerolog.DebugLevel {
			wantDebug = 7
		}
		if infos != 4 || debugs != wantDebug {
			t.Errorf("level %v: %d info and %d debug lines, want 4 and %d:\n%s", level, infos, debugs, wantDebug, buf.String())
		}
		if last["i"] != 10.0 || last["held_back"] != 7.0 {
			t.Errorf("level %v: first line of the next second = %v, want i 10 with held_back 7", level, last)
		}
	}
}
