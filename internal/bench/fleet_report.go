package bench

import (
	"fmt"
	"io"
	"strings"
)

// FleetResult is the fleet scenario's figures.
type FleetResult struct {
	Scenario    string  `json:"scenario"`
	Hubs        int     `json:"hubs"`
	Loaders     int     `json:"load_generators"`
	Streams     int     `json:"streams"`
	Topics      int     `json:"topics"`
	Rate        float64 `json:"rate_per_s"`
	DurationS   float64 `json:"duration_s"`
	Chaos       bool    `json:"chaos"`
	Sharded     bool    `json:"sharded_pubsub"`
	PayloadSize int     `json:"payload_bytes"`
	LoadBefore  string  `json:"load_average_before"`
	LoadAfter   string  `json:"load_average_after"`

	ConnectAll    Millis   `json:"connect_all_ms"`
	Published     int      `json:"published"`
	PublishFailed int      `json:"publish_failed"`
	PublishedPS   float64  `json:"published_per_s"`
	PublishErrors []string `json:"publish_errors,omitempty"` // the first few
	Stored        int      `json:"stored"`                   // events in the streams at the end
	Expected      int      `json:"expected"`                 // deliveries the clients should have had
	Deliveries    int64    `json:"deliveries"`
	DeliveriesPS  float64  `json:"deliveries_per_s"`
	Latency       Latency  `json:"latency"`
	// LatencyOverTime is latency by when the events were sent, in windows of 5 s from the publishing's start
	// (the first may begin a little before it): where in the run, and so after which fault, the time went.
	LatencyOverTime []LatencyWindow `json:"latency_over_time"`

	HubCPUPercent           float64    `json:"hub_cpu_percent_of_one_core"` // all hubs together
	HubCPUMicrosPerDelivery float64    `json:"hub_cpu_us_per_delivery"`
	LoadGenCPUPercent       float64    `json:"load_generators_cpu_percent_of_one_core"`
	BenchCPUPercent         float64    `json:"publishers_cpu_percent_of_one_core"` // this process: publishers and faults
	PerHub                  []FleetHub `json:"per_hub"`
	Redis                   RedisCost  `json:"redis"`
	Faults                  []Fault    `json:"faults,omitempty"`
	Check                   FleetCheck `json:"check"`
}

// LatencyWindow is the latency of the events sent in one window.
type LatencyWindow struct {
	FromS   float64 `json:"from_s"`
	Count   uint64  `json:"deliveries"`
	Latency Latency `json:"latency"`
}

// FleetHub is one hub's figures.
type FleetHub struct {
	Addr            string  `json:"addr"`
	Streams         int     `json:"streams_idle"` // hub_sse_connections_active once every stream was open
	StreamsEnd      int     `json:"streams_end"`  // clients whose latest stream was on this hub
	RSSEmptyMiB     float64 `json:"rss_empty_mib"`
	RSSIdleMiB      float64 `json:"rss_idle_mib"`
	RSSPerStreamKiB float64 `json:"rss_per_idle_stream_kib"`
	// HeapPerStreamKiB and StackPerStreamKiB are the Go heap and stacks in use per idle stream (its /metrics).
	HeapPerStreamKiB  float64 `json:"heap_per_idle_stream_kib"`
	StackPerStreamKiB float64 `json:"stack_per_idle_stream_kib"`
	GoroutinesIdle    int     `json:"goroutines_idle"`
	RSSEndMiB         float64 `json:"rss_end_mib"`
	CPUSeconds        float64 `json:"cpu_s"`
	Restarted         bool    `json:"restarted,omitempty"`
}

// FleetCheck is the verdict on every client of the fleet. Resets are allowed where Redis really lost history: then
// events it never stored or no longer holds show as delivered-not-stored or acked-not-stored, and only then may a
// reset excuse a gap.
type FleetCheck struct {
	Lost               int      `json:"lost"`
	Duplicated         int      `json:"duplicated"`
	Reordered          int      `json:"reordered"`
	Malformed          int      `json:"malformed"`
	NeverOpened        int      `json:"clients_never_opened"`
	Behind             int      `json:"clients_behind"`
	FaultsFailed       int      `json:"faults_failed"`
	Resets             int      `json:"resets"`
	Excused            int      `json:"excused_by_reset"`
	DeliveredNotStored int      `json:"delivered_not_stored"` // ids a client got that the stream lost afterwards
	AckedNotStored     int      `json:"acked_not_stored"`     // ids the script answered that the stream lost
	Reconnects         int      `json:"reconnects"`
	Refused            int      `json:"requests_refused"`
	Examples           []string `json:"examples,omitempty"`
}

func (c FleetCheck) redisLost() bool { return c.DeliveredNotStored > 0 || c.AckedNotStored > 0 }

func (c FleetCheck) ok() bool {
	return c.Lost == 0 && c.Duplicated == 0 && c.Reordered == 0 && c.Malformed == 0 && c.NeverOpened == 0 &&
		c.Behind == 0 && c.FaultsFailed == 0 && (c.Excused == 0 || c.redisLost())
}

func (r *FleetResult) print(w io.Writer, asJSON bool) error {
	if asJSON {
		return writeJSON(w, r)
	}
	tw, row := table(w)
	pubsub := "pub/sub"
	if r.Sharded {
		pubsub = "sharded pub/sub"
	}
	row("scenario", "fleet: %d hubs, %d load generators, Redis Cluster 3+3 (%s)", r.Hubs, r.Loaders, pubsub)
	row("load average", "%s before, %s after", r.LoadBefore, r.LoadAfter)
	row("streams", "%d on %d topics, all open in %v ms", r.Streams, r.Topics, r.ConnectAll)
	row("events", "%d published (%.0f/s, %.0f/s asked, %d B payload), %d failed, %d stored", r.Published, r.PublishedPS, r.Rate, r.PayloadSize, r.PublishFailed, r.Stored)
	row("deliveries", "%d of %d expected (%.0f/s)", r.Deliveries, r.Expected, r.DeliveriesPS)
	row("publish→receive", "%v", r.Latency)
	for _, w := range r.LatencyOverTime {
		row("", "sent from %.0f s: %d deliveries, %v", w.FromS, w.Count, w.Latency)
	}
	row("hub CPU", "%.1f %% of one core for all hubs; %.2f µs per delivery (load generators: %.1f %%, publishers: %.1f %%)",
		r.HubCPUPercent, r.HubCPUMicrosPerDelivery, r.LoadGenCPUPercent, r.BenchCPUPercent)
	for i, h := range r.PerHub {
		again := ""
		if h.Restarted {
			again = ", restarted"
		}
		row(fmt.Sprintf("hub %d", i), "%s: %d streams idle, %.2f KiB RSS per idle stream (%.1f → %.1f MiB; Go heap %.2f + stacks %.2f KiB, %d goroutines), %.1f MiB at the end, %d streams at the end, CPU %.1f s%s",
			h.Addr, h.Streams, h.RSSPerStreamKiB, h.RSSEmptyMiB, h.RSSIdleMiB, h.HeapPerStreamKiB, h.StackPerStreamKiB, h.GoroutinesIdle, h.RSSEndMiB, h.StreamsEnd, h.CPUSeconds, again)
	}
	rc := r.Redis
	row("Redis", "%.2f commands per event on the masters (%s); CPU %.1f µs per event on masters, %.1f on replicas (idle: %.1f %% of a core, all nodes)",
		rc.CommandsPerEvent, strings.Join(rc.top(6), ", "), rc.MasterCPUMicrosPerEvent, rc.ReplicaCPUMicrosPerEvent, rc.IdleCPUPercent)
	for _, e := range r.PublishErrors {
		row("publish error", "%s", e)
	}
	for _, f := range r.Faults {
		status := f.Detail
		if f.Error != "" {
			status = "FAILED: " + f.Error
		}
		row("fault", "at %.1f s, %v ms: %s: %s", float64(f.At)/1000, f.Took, f.Name, status)
	}
	c := r.Check
	verdict := "ok"
	if !c.ok() {
		verdict = "FAILED"
	}
	row("check", "%s: lost %d, duplicated %d, reordered %d, malformed %d, clients never open %d, behind %d, faults failed %d",
		verdict, c.Lost, c.Duplicated, c.Reordered, c.Malformed, c.NeverOpened, c.Behind, c.FaultsFailed)
	row("resets", "%d (events excused by them %d); lost by Redis: %d delivered then gone from the stream, %d acknowledged and never stored",
		c.Resets, c.Excused, c.DeliveredNotStored, c.AckedNotStored)
	row("reconnects", "%d, requests refused %d", c.Reconnects, c.Refused)
	for _, e := range c.Examples {
		row("", "%s", e)
	}
	return tw.Flush()
}
