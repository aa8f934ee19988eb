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
// last read are decoded by Redis, which sends back only the members a verdict is judged by. The scan decodes up to
// stateFetchCount changed envelopes of its page itself (it is told the ids the last read judged), so a small topic
// is read in one command; what it leaves is fetched after, stateFetchCount at a time. No command reads more than
// stateScanCount fields or decodes more than stateFetchCount envelopes, whatever the topic's size, and no payload
// crosses the wire.
const (
	stateScanCount  = 16
	stateFetchCount = 4
	smallValue      = 4096 // values longer than this (not envelopes) are sent as their size alone
	// scanKnownIDs is the most ids of the last read a scan is told; past it the scan decodes nothing and the
	// changed envelopes are all fetched.
	scanKnownIDs = 32
)

// reduceLua defines reduce(v): an envelope decoded and cut to its id, type and the data members judged (each at
// most 256 bytes encoded, false in place of a longer one), encoded again; "" for a value that is not an envelope.
const reduceLua = `local names = {'status', 'eta_s', 'key', 'holder', 'fence', 'state', 'workflow'}
local function reduce(v)
  local ok, env = pcall(cjson.decode, v)
  if not ok or type(env) ~= 'table' then return '' end
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
  if okr then return r end
  return ''
end
`

// envelopeFieldLua is the Lua test that field f holds an envelope the sweeper judges, made from the field names.
var envelopeFieldLua = fmt.Sprintf("string.sub(f, 1, %d) == '%s' or string.sub(f, 1, %d) == '%s' or string.sub(f, 1, %d) == '%s'",
	len(fieldWorkflow), fieldWorkflow, len(fieldWFLock), fieldWFLock, len(fieldFenceLow), fieldFenceLow)

var (
	// stateScan: ARGV the cursor, the page size, the small-value limit, how many envelopes it may decode, then
	// the ids the last read judged. Per field: its name, then 'd' .. id .. ' ' .. the reduced envelope (one it
	// decoded), 'e' .. id (an envelope it did not), 'v' .. value (a small value) or 'x', then the value's size.
	stateScan = redis.NewScript(reduceLua + `local r = redis.call('HSCAN', KEYS[1], ARGV[1], 'COUNT', ARGV[2])
local out = {r[1]}
local kv = r[2]
local small = tonumber(ARGV[3])
local budget = tonumber(ARGV[4])
local known = {}
for i = 5, #ARGV do known[ARGV[i]] = true end
for i = 1, #kv, 2 do
  local f, v = kv[i], kv[i + 1]
  local id = string.match(string.sub(v, 1, 64), '^{"id":"(%d+%-%d+)"')
  out[#out + 1] = f
  if id then
    local red = ''
    if budget > 0 and not known[id] and (` + envelopeFieldLua + `) then
      budget = budget - 1
      red = reduce(v)
    end
    if red ~= '' then out[#out + 1] = 'd' .. id .. ' ' .. red else out[#out + 1] = 'e' .. id end
  elseif #v <= small then
    out[#out + 1] = 'v' .. v
  else
    out[#out + 1] = 'x'
  end
  out[#out + 1] = tostring(#v)
end
return out`)
	// stateFetch reduces the envelopes of the fields ARGV names ("" for a field that is gone).
	stateFetch = redis.NewScript(reduceLua + `local out = {}
for i, f in ipairs(ARGV) do
  local v = redis.call('HGET', KEYS[1], f)
  out[i] = v and reduce(v) or ''
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
	id      string // an envelope's id, "" for another value
	value   string // a small value; "" for an envelope or a large value
	reduced string // the envelope as stateFetch reduces it, when the scan decoded it
	size    int64
}

// scanArgs is a stateScan call's ARGV after the key: the cursor, the page, the small-value limit, the envelopes it
// may decode and the ids prev (the last read, or nil) judged. A state prev knows too many ids of is decoded by the
// fetches alone.
func scanArgs(cursor string, prev *workflow.TopicState) []any {
	args := []any{cursor, stateScanCount, smallValue, stateFetchCount}
	if prev == nil {
		return args
	}
	add := func(id hub.ID) {
		if !id.IsZero() {
			args = append(args, id.String())
		}
	}
	for _, w := range prev.Workflows {
		add(w.EventID)
		if w.Lock != nil {
			add(w.Lock.EventID)
		}
	}
	for _, l := range prev.FenceLow {
		add(l.EventID)
	}
	if len(args)-4 > scanKnownIDs {
		args = args[:4]
		args[3] = 0
	}
	return args
}

// State reads one topic's state. Envelopes whose id is the one prev (the last read, or nil) judged are not fetched
// again.
func (w *Workflows) State(ctx context.Context, topic string, prev *workflow.TopicState) (*workflow.TopicState, error) {
	key := w.pub.keys.State(topic)
	fields, err := w.scanState(ctx, key, prev)
	if err != nil {
		return nil, fmt.Errorf("read state of %s: %w", topic, err)
	}
	st := buildState(topic, fields, prev)
	applyScanned(st, fields)
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

func (w *Workflows) scanState(ctx context.Context, key string, prev *workflow.TopicState) (map[string]scanned, error) {
	fields := map[string]scanned{}
	cursor := "0"
	for {
		res, err := stateScan.Run(ctx, w.pub.rdb, []string{key}, scanArgs(cursor, prev)...).Slice()
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
		case strings.HasPrefix(v, "d"):
			f.id, f.reduced, _ = strings.Cut(v[1:], " ")
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

// unread reports whether field k holds an envelope the state has not taken yet (from the last read or the scan).
func unread(st *workflow.TopicState, k string) bool {
	switch {
	case strings.HasPrefix(k, fieldWorkflow):
		return st.Workflows[k[len(fieldWorkflow):]].EventID.IsZero()
	case strings.HasPrefix(k, fieldWFLock):
		return st.Workflows[k[len(fieldWFLock):]].Lock == nil
	case strings.HasPrefix(k, fieldFenceLow):
		return st.FenceLow[k[len(fieldFenceLow):]] == nil
	}
	return false
}

// applyScanned takes the envelopes the scan decoded, where the last read had not judged them already.
func applyScanned(st *workflow.TopicState, fields map[string]scanned) {
	for k, f := range fields {
		if f.reduced != "" && unread(st, k) {
			applyEnvelope(st, k, f.reduced)
		}
	}
}

// toFetch names, sorted, the envelope fields whose id neither the last read nor the scan gave.
func toFetch(st *workflow.TopicState, fields map[string]scanned) []any {
	var want []string
	for k, f := range fields {
		if f.id != "" && unread(st, k) {
			want = append(want, k)
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
