package pubsub

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/syncverse/hub/hub"
	"github.com/syncverse/hub/workflow"
)

// A topic's state is read a few fields at a time, reduced inside Redis: the scan sends back each field's name, its
// size and, for an envelope, only its id (other values only when small); the envelopes whose id changed since the
// last read are then decoded by Redis, which sends back only the members a verdict is judged by. No command reads
// more than stateScanCount fields or decodes more than stateFetchCount envelopes, whatever the topic's size, and no
// payload crosses the wire.
const (
	stateScanCount  = 16
	stateFetchCount = 4
	smallValue      = 4096 // values longer than this (not envelopes) are sent as their size alone
)

var (
	stateScan = redis.NewScript(`local r = redis.call('HSCAN', KEYS[1], ARGV[1], 'COUNT', ARGV[2])
local out = {r[1]}
local kv = r[2]
local small = tonumber(ARGV[3])
for i = 1, #kv, 2 do
  local v = kv[i + 1]
  local id = string.match(string.sub(v, 1, 64), '^{"id":"(%d+%-%d+)"')
  out[#out + 1] = kv[i]
  if id then
    out[#out + 1] = 'e' .. id
  elseif #v <= small then
    out[#out + 1] = 'v' .. v
  else
    out[#out + 1] = 'x'
  end
  out[#out + 1] = tostring(#v)
end
return out`)
	// stateFetch decodes envelopes and keeps of their data only the members judged (each at most 256 bytes
	// encoded, false in place of a longer one).
	stateFetch = redis.NewScript(`local names = {'status', 'eta_s', 'key', 'holder', 'fence', 'state', 'workflow'}
local out = {}
for i, f in ipairs(ARGV) do
  local v = redis.call('HGET', KEYS[1], f)
  local res = ''
  if v then
    local ok, env = pcall(cjson.decode, v)
    if ok and type(env) == 'table' then
      local d = {}
      if type(env.data) == 'table' then
        for _, n in ipairs(names) do
          local x = env.data[n]
          if x ~= nil then
            local okx, enc = pcall(cjson.encode, x)
            if okx and #enc <= 256 then d[n] = x else d[n] = false end
          end
        end
      end
      local okr, r = pcall(cjson.encode, {id = env.id, type = env.type, data = d})
      if okr then res = r end
    end
  end
  out[i] = res
end
return out`)
	// stateTrim deletes workflows' fields (ARGV: pairs of workflow and the id its latest event had when judged,
	// "" for none); a workflow that moved on since is kept.
	stateTrim = redis.NewScript(`local n = 0
for i = 1, #ARGV, 2 do
  local wf, expect = ARGV[i], ARGV[i + 1]
  local cur = redis.call('HGET', KEYS[1], 'wf:' .. wf)
  local id = cur and string.match(string.sub(cur, 1, 64), '^{"id":"(%d+%-%d+)"')
  if expect == '' or not id or id == expect then
    if redis.call('HDEL', KEYS[1], 'wf:' .. wf, 'wfstart:' .. wf, 'wflock:' .. wf, 'verdict:' .. wf,
      'health:' .. wf, 'healthq:' .. wf, 'dup:' .. wf, 'dupq:' .. wf, 'final:' .. wf, 'finalq:' .. wf) > 0 then
      n = n + 1
    end
  end
end
return n`)
)

// scanned is one field of a state hash as the scan sent it.
type scanned struct {
	id    string // an envelope's id, "" for another value
	value string // a small value; "" for an envelope or a large value
	size  int64
}

// State reads one topic's state. Envelopes whose id is the one prev (the last read, or nil) judged are not fetched
// again.
func (w *Workflows) State(ctx context.Context, topic string, prev *workflow.TopicState) (*workflow.TopicState, error) {
	key := w.pub.keys.State(topic)
	fields, err := w.scanState(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("read state of %s: %w", topic, err)
	}
	st := buildState(topic, fields, prev)
	if err := w.fetchChanged(ctx, key, st, fields); err != nil {
		return nil, fmt.Errorf("read state of %s: %w", topic, err)
	}
	pruneEmpty(st)
	return st, nil
}

// pruneEmpty drops the workflows a state read found nothing of: no event, no mark, no lock.
func pruneEmpty(st *workflow.TopicState) {
	for id, wf := range st.Workflows {
		if wf.EventID.IsZero() && len(wf.Marks) == 0 && wf.Lock == nil {
			delete(st.Workflows, id)
		}
	}
}

func (w *Workflows) scanState(ctx context.Context, key string) (map[string]scanned, error) {
	fields := map[string]scanned{}
	cursor := "0"
	for {
		res, err := stateScan.Run(ctx, w.pub.rdb, []string{key}, cursor, stateScanCount, smallValue).Slice()
		if err != nil {
			return nil, err
		}
		if cursor = addScanned(fields, res); cursor == "0" || cursor == "" {
			return fields, nil
		}
	}
}

// addScanned adds one stateScan reply's fields to fields and returns the scan's next cursor ("" or "0": done).
func addScanned(fields map[string]scanned, res []any) (cursor string) {
	if len(res) == 0 {
		return ""
	}
	cursor, _ = res[0].(string)
	for i := 1; i+2 < len(res); i += 3 {
		name, _ := res[i].(string)
		v, _ := res[i+1].(string)
		n, _ := res[i+2].(string)
		f := scanned{}
		f.size, _ = strconv.ParseInt(n, 10, 64)
		switch {
		case strings.HasPrefix(v, "e"):
			f.id = v[1:]
		case strings.HasPrefix(v, "v"):
			f.value = v[1:]
		}
		fields[name] = f
	}
	return cursor
}

// buildState makes the state of everything but the envelopes to fetch: those unchanged since prev are taken from it.
func buildState(topic string, fields map[string]scanned, prev *workflow.TopicState) *workflow.TopicState {
	st := &workflow.TopicState{Topic: topic, Cursor: fields[fieldCursor].value, Workflows: map[string]*workflow.Workflow{},
		FenceLow: map[string]*workflow.Lock{}, Fields: len(fields)}
	get := func(id string) *workflow.Workflow {
		w := st.Workflows[id]
		if w == nil {
			w = &workflow.Workflow{ID: id, Marks: map[string]workflow.Mark{}}
			st.Workflows[id] = w
		}
		return w
	}
	old := func(id string) *workflow.Workflow {
		if prev == nil {
			return nil
		}
		return prev.Workflows[id]
	}
	for k, f := range fields {
		st.Bytes += int64(len(k)) + f.size
		wfName, owned := workflowOf(k)
		if owned {
			get(wfName).Size += int64(len(k)) + f.size
		}
		switch {
		case strings.HasPrefix(k, fieldWorkflow):
			if o := old(wfName); o != nil && f.id != "" && o.EventID.String() == f.id {
				w := get(wfName)
				w.EventID, w.Status, w.ETA = o.EventID, o.Status, o.ETA
			}
		case strings.HasPrefix(k, fieldStart):
			get(wfName).Start, _ = hub.ParseID(f.value)
		case strings.HasPrefix(k, fieldWFLock):
			if o := old(wfName); o != nil && o.Lock != nil && f.id != "" && o.Lock.EventID.String() == f.id {
				get(wfName).Lock = o.Lock
			}
		case strings.HasPrefix(k, fieldFenceLow):
			if prev != nil && f.id != "" {
				if l := prev.FenceLow[k[len(fieldFenceLow):]]; l != nil && l.EventID.String() == f.id {
					st.FenceLow[k[len(fieldFenceLow):]] = l
				}
			}
		default:
			for _, m := range []string{workflow.MarkHealth, workflow.MarkDup, workflow.MarkFinal} {
				if wf, ok := strings.CutPrefix(k, m+":"); ok {
					get(wf).Marks[m] = workflow.Mark{Value: f.value, Queued: fields[markField(m+"q", wf)].value == f.value}
				}
			}
		}
	}
	return st
}

// workflowOf names the workflow a field belongs to, if one.
func workflowOf(field string) (string, bool) {
	for _, p := range []string{fieldWorkflow, fieldStart, fieldWFLock, fieldVerdict} {
		if wf, ok := strings.CutPrefix(field, p); ok {
			return wf, true
		}
	}
	for _, m := range []string{workflow.MarkHealth, workflow.MarkDup, workflow.MarkFinal} {
		for _, p := range []string{m + ":", m + "q:"} {
			if wf, ok := strings.CutPrefix(field, p); ok {
				return wf, true
			}
		}
	}
	return "", false
}

// fetchChanged reads, reduced, the envelopes buildState could not take from prev.
func (w *Workflows) fetchChanged(ctx context.Context, key string, st *workflow.TopicState, fields map[string]scanned) error {
	for chunk := range slices.Chunk(toFetch(st, fields), stateFetchCount) {
		vals, err := stateFetch.Run(ctx, w.pub.rdb, []string{key}, chunk...).StringSlice()
		if err != nil {
			return err
		}
		applyEnvelopes(st, chunk, vals)
	}
	return nil
}

// toFetch names, sorted, the envelope fields whose id buildState could not take from the last read.
func toFetch(st *workflow.TopicState, fields map[string]scanned) []any {
	var want []string
	for k, f := range fields {
		if f.id == "" {
			continue
		}
		switch {
		case strings.HasPrefix(k, fieldWorkflow):
			if st.Workflows[k[len(fieldWorkflow):]].EventID.IsZero() {
				want = append(want, k)
			}
		case strings.HasPrefix(k, fieldWFLock):
			if st.Workflows[k[len(fieldWFLock):]].Lock == nil {
				want = append(want, k)
			}
		case strings.HasPrefix(k, fieldFenceLow):
			if st.FenceLow[k[len(fieldFenceLow):]] == nil {
				want = append(want, k)
			}
		}
	}
	slices.Sort(want)
	out := make([]any, len(want))
	for i, f := range want {
		out[i] = f
	}
	return out
}

// applyEnvelopes takes one stateFetch reply: vals[i] is the reduced envelope of field chunk[i] ("" when gone).
func applyEnvelopes(st *workflow.TopicState, chunk []any, vals []string) {
	for i, v := range vals {
		if i < len(chunk) && v != "" {
			applyEnvelope(st, chunk[i].(string), v)
		}
	}
}

func applyEnvelope(st *workflow.TopicState, field, v string) {
	switch {
	case strings.HasPrefix(field, fieldWorkflow):
		parseProgress(st.Workflows[field[len(fieldWorkflow):]], v)
	case strings.HasPrefix(field, fieldWFLock):
		st.Workflows[field[len(fieldWFLock):]].Lock = parseLock(v)
	case strings.HasPrefix(field, fieldFenceLow):
		if l := parseLock(v); l != nil {
			st.FenceLow[field[len(fieldFenceLow):]] = l
		}
	}
}

// Data returns the data of a workflow's latest progress event, null when it has none.
func (w *Workflows) Data(ctx context.Context, topic, wf string) (json.RawMessage, error) {
	v, err := w.pub.rdb.HGet(ctx, w.pub.keys.State(topic), fieldWorkflow+wf).Result()
	switch {
	case err == redis.Nil:
		return json.RawMessage("null"), nil
	case err != nil:
		return nil, fmt.Errorf("read data of %s/%s: %w", topic, wf, err)
	}
	var env stateEnvelope
	if json.Unmarshal([]byte(v), &env) != nil || env.Type != workflow.ProgressType || env.Data == nil {
		return json.RawMessage("null"), nil
	}
	return env.Data, nil
}

// Trim deletes the workflows' fields from the topic's state, keeping those that moved on past the event they were
// judged by. It returns how many it deleted.
func (w *Workflows) Trim(ctx context.Context, topic string, wfs []*workflow.Workflow) (int, error) {
	n := 0
	for chunk := range slices.Chunk(wfs, 64) {
		args := make([]any, 0, 2*len(chunk))
		for _, wf := range chunk {
			expect := ""
			if !wf.EventID.IsZero() {
				expect = wf.EventID.String()
			}
			args = append(args, wf.ID, expect)
		}
		got, err := stateTrim.Run(ctx, w.pub.rdb, []string{w.pub.keys.State(topic)}, args...).Int()
		if err != nil {
			return n, fmt.Errorf("trim state of %s: %w", topic, err)
		}
		n += got
	}
	return n, nil
}
