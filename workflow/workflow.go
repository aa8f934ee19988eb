package workflow

import (
	"encoding/json"
	"time"

	"github.com/syncverse/hub/hub"
)

// Verdicts and notification kinds, as docs/workflow-health.md ("The verdicts") names them.
const (
	Stalled   = "stalled"
	Recovered = "recovered"
	Duplicate = "duplicate"
	Failed    = "failed"
)

// EventType is the type of the events that carry the hub's verdicts. Only the hub publishes it.
const EventType = "health"

// Statuses a progress event may carry.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// Marks are the records a verdict leaves beside a workflow's state; each names one kind of occurrence.
const (
	MarkHealth = "health" // the stall state: "stalled <event id>" or "recovered <event id>"
	MarkDup    = "dup"    // the last duplicate occurrence
	MarkFinal  = "final"  // the final event whose end was recorded (and, when failed, notified)
)

// TopicState is what one topic's state says of its workflows.
type TopicState struct {
	Topic     string
	Cursor    string               // the id of the last event the state reflects
	Workflows map[string]*Workflow // by workflow id
	// FenceLow holds, per lock key, the latest lock event that came with a fence lower than one already seen.
	FenceLow map[string]*Lock
	Bytes    int64 // the state's size in Redis: its fields' names and values
	Fields   int   // its number of fields
	// busy caches underWay as the last sweep left the state (swept says it did): the next sweep reads the cursor of
	// a busy topic without walking its workflows again. Only ever true too often, never false too often.
	busy, swept bool
	committed   bool // a commit of the sweeper touched it since it was read (its dirty may be true)
	judgement        // the last sweep's judgement of it (judge.go)
}

// Workflow is one workflow as its latest events describe it.
type Workflow struct {
	ID      string
	EventID hub.ID          // its latest progress event
	Status  string          // from that event; "" when it said none
	ETA     time.Duration   // its eta_s
	Start   hub.ID          // its first event, zero when unknown
	Lock    *Lock           // its latest lock event, nil when none
	Marks   map[string]Mark // by Mark* name
	Size    int64           // the bytes of its fields in the state (its data is never held: notifications fetch it)

	stale bool // a commit of this sweeper changed its marks since they were read
}

// Lock is a lock event's data and id.
type Lock struct {
	Key      string `json:"key"`
	Holder   string `json:"holder"`
	Fence    int64  `json:"fence"`
	State    string `json:"state"`
	Workflow string `json:"workflow,omitempty"`
	EventID  hub.ID `json:"-"`
}

// Held reports whether the lock event says its holder holds the key.
func (l *Lock) Held() bool { return l != nil && (l.State == "acquired" || l.State == "renewed") }

// Mark is a committed verdict: its value (kind and basis) and whether its notification has been queued.
type Mark struct {
	Value  string
	Queued bool
}

// Active reports whether the workflow is still expected to send events.
func (w *Workflow) Active() bool { return w.Status == StatusRunning || w.Status == StatusQueued }

// Final reports whether the workflow has ended.
func (w *Workflow) Final() bool {
	return w.Status == StatusSucceeded || w.Status == StatusFailed || w.Status == StatusCancelled
}

// Health is the data of a health event.
type Health struct {
	Workflow string    `json:"workflow"`
	Verdict  string    `json:"verdict"`
	Since    time.Time `json:"since"`
	Key      string    `json:"key,omitempty"`
	Detail   string    `json:"detail,omitempty"`
}

// Notification is what the on-call is told: one per occurrence, whatever the number of replicas.
type Notification struct {
	ID       string          `json:"id"`
	Kind     string          `json:"kind"`
	Topic    string          `json:"topic"`
	Workflow string          `json:"workflow"`
	EventID  string          `json:"event_id"`
	At       time.Time       `json:"at"`
	Data     json.RawMessage `json:"data"`
	// DataTruncated says Data was cut to notify.max_data_bytes (members dropped, long strings shortened).
	DataTruncated bool `json:"data_truncated,omitempty"`
	// Coalesced is, when more than one, how many notifications of this kind on this topic the delivery stands
	// for: those queued while it waited. Workflows names their workflows (up to notify's limit).
	Coalesced int      `json:"coalesced,omitempty"`
	Workflows []string `json:"workflows,omitempty"`
}

// idTime is the time a stream id was assigned.
func idTime(id hub.ID) time.Time { return time.UnixMilli(int64(id.Ms)) }
