package bench

import (
	"context"
	"sort"
	"strconv"
	"strings"
)

// redisMeter adds up what the cluster's nodes did between readings of INFO commandstats and INFO cpu. A node that
// was started again (a new run_id) counts from zero; what its old process did is in the reading taken before it
// was killed. Commands are counted on masters only (a replica's commandstats repeat its master's writes); CPU on
// every node, split by the role each had at the end of an interval.
type redisMeter struct {
	last       map[string]nodeSample
	calls      map[string]int64 // command → calls on masters
	masterCPU  float64          // seconds
	replicaCPU float64
}

type nodeSample struct {
	runID string
	role  string
	calls map[string]int64
	cpu   float64 // used_cpu_sys + used_cpu_user, seconds
}

// benchOwn are the commands the bench itself sends while it polls the cluster; they are left out of the counts.
var benchOwn = map[string]bool{"info": true, "cluster": true, "ping": true}

func (m *redisMeter) checkpoint(ctx context.Context, c *redisCluster) {
	if m.last == nil {
		m.last, m.calls = map[string]nodeSample{}, map[string]int64{}
	}
	for _, n := range c.nodes {
		if n.down {
			continue
		}
		s, ok := sampleNode(ctx, n)
		if !ok {
			continue
		}
		prev, seen := m.last[n.addr]
		m.last[n.addr] = s
		if !seen {
			continue // the first reading is where this node is measured from
		}
		if prev.runID != s.runID {
			prev = nodeSample{calls: map[string]int64{}}
		}
		if s.role == "master" {
			m.masterCPU += s.cpu - prev.cpu
			for cmd, v := range s.calls {
				m.calls[cmd] += v - prev.calls[cmd]
			}
		} else {
			m.replicaCPU += s.cpu - prev.cpu
		}
	}
}

func sampleNode(ctx context.Context, n *redisNode) (nodeSample, bool) {
	text, err := n.rdb.Info(ctx, "server", "replication", "cpu", "commandstats").Result()
	if err != nil {
		return nodeSample{}, false
	}
	s := nodeSample{runID: infoField(text, "run_id"), role: infoField(text, "role"), calls: cmdstatCalls(text)}
	sys, _ := strconv.ParseFloat(infoField(text, "used_cpu_sys"), 64)
	user, _ := strconv.ParseFloat(infoField(text, "used_cpu_user"), 64)
	s.cpu = sys + user
	return s, true
}

// RedisCost is what the cluster spent per published event.
type RedisCost struct {
	CommandsPerEvent         float64            `json:"commands_per_event"`
	ByCommand                map[string]float64 `json:"by_command_per_event"`
	MasterCPUMicrosPerEvent  float64            `json:"master_cpu_us_per_event"`
	ReplicaCPUMicrosPerEvent float64            `json:"replica_cpu_us_per_event"`
	MasterCPUSeconds         float64            `json:"master_cpu_s"`
	ReplicaCPUSeconds        float64            `json:"replica_cpu_s"`
	// IdleCPUPercent is every node's CPU together while the streams were open and nothing was published: the
	// cluster's own background (cron, cluster bus, replication pings), part of the per-event figures above.
	IdleCPUPercent float64 `json:"idle_cpu_percent_of_one_core"`
}

func (m *redisMeter) result(published int) RedisCost {
	rc := RedisCost{ByCommand: map[string]float64{}, MasterCPUSeconds: m.masterCPU, ReplicaCPUSeconds: m.replicaCPU}
	if published <= 0 {
		return rc
	}
	ev := float64(published)
	var total int64
	for cmd, v := range m.calls {
		if benchOwn[strings.SplitN(cmd, "|", 2)[0]] || v <= 0 {
			continue
		}
		total += v
		rc.ByCommand[cmd] = float64(v) / ev
	}
	rc.CommandsPerEvent = float64(total) / ev
	rc.MasterCPUMicrosPerEvent = m.masterCPU * 1e6 / ev
	rc.ReplicaCPUMicrosPerEvent = m.replicaCPU * 1e6 / ev
	return rc
}

// top returns the n commands with the most calls per event, "name 1.00" each.
func (rc RedisCost) top(n int) []string {
	names := make([]string, 0, len(rc.ByCommand))
	for k := range rc.ByCommand {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return rc.ByCommand[names[i]] > rc.ByCommand[names[j]] })
	var out []string
	for _, k := range names[:min(n, len(names))] {
		out = append(out, k+" "+strconv.FormatFloat(rc.ByCommand[k], 'f', 2, 64))
	}
	return out
}
