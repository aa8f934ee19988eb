// The connection to the hub: first paint from each topic's snapshot, then one EventSource from the snapshots' cursor.
// Positions are tracked per topic so that nothing is applied twice: not across EventSource reconnects, not across
// our own reopen after a refused connection, not across a reset that reloads a snapshot.
import { cmpId, formatCursor, idTime, parseEventId } from './ids.js';

// EventSource only delivers named events to listeners registered by that exact name, so the types the console can
// show are listed here; `?types=a,b` in the page URL adds more.
export const KNOWN_TYPES = ['health', 'progress', 'lock', 'reset', 'message', 'log', 'info', 'notice', 'warn', 'warning',
  'error', 'debug', 'trace', 'status', 'step', 'agent', 'metric', 'metrics', 'alert', 'audit', 'deploy', 'build',
  'test', 'output', 'stdout', 'stderr', 'dispatch', 'lease', 'workflow', 'task', 'job', 'note', 'system'];

const MAX_BACKOFF_MS = 30000;
const STATE_HISTORY = 200;

export class Feed {
  /**
   * @param {{topics:string[], store:import('./store.js').Store, types?:string[], onChange?:()=>void,
   *          fetchJSON?:(url:string)=>Promise<any>}} opts
   */
  constructor({ topics, store, types = [], onChange = () => {}, fetchJSON = getJSON }) {
    this.topics = topics;
    this.store = store;
    this.types = [...new Set([...KNOWN_TYPES, ...types])];
    this.onChange = onChange;
    this.fetchJSON = fetchJSON;
    this.positions = new Map(topics.map((t) => [t, { lastId: '', gate: null, target: '' }]));
    this.state = 'connecting';
    this.detail = '';
    this.attempt = 0;
    this.history = [];
    this.counts = { events: 0, replayed: 0, resets: 0, reconnects: 0, duplicates: 0, ephemeral: 0, covered: 0,
      snapshots: 0, opens: 0 };
    this.lastMessageAt = NaN;
    this.openedAt = NaN;
    this.lastReset = null;
    this.es = null;
    this.esLastId = '';
    this.retryTimer = 0;
    this.replayRun = 0;
    this.clockSamples = [];
    this.clockOffset = 0;
    this.latencies = [];
    this.closed = false;
    this.setState('connecting');
  }

  async start() {
    await Promise.all(this.topics.map((t) => this.loadSnapshot(t)));
    if (!this.closed) this.open();
  }

  close() {
    this.closed = true;
    clearTimeout(this.retryTimer);
    if (this.es) this.es.close();
  }

  setState(state, detail = '') {
    if (state === this.state && detail === this.detail && this.history.length) return;
    this.state = state;
    this.detail = detail;
    this.history.push({ state, detail, attempt: this.attempt, at: Date.now() });
    if (this.history.length > STATE_HISTORY) this.history.shift();
    this.onChange();
  }

  /** Loads a topic's snapshot, retrying with backoff until it works; the topic's events wait meanwhile. */
  async loadSnapshot(topic) {
    const pos = this.positions.get(topic);
    pos.gate = pos.gate || [];
    for (let attempt = 0; !this.closed; attempt++) {
      try {
        const snap = await this.fetchJSON(`/topics/${encodeURIComponent(topic)}/snapshot`);
        this.applySnapshot(topic, snap);
        return;
      } catch (err) {
        this.store.note(`Snapshot of ${topic} failed: ${err.message}; retrying`, 'warn', topic);
        this.onChange();
        await sleep(backoff(attempt));
      }
    }
  }

  applySnapshot(topic, snap) {
    const pos = this.positions.get(topic);
    const cursor = typeof snap.cursor === 'string' && snap.cursor ? snap.cursor : '0-0';
    this.store.clearTopic(topic);
    const byId = (list) => Object.values(list || {}).filter((e) => e && typeof e === 'object')
      .sort((a, b) => cmpId(a.id, b.id));
    // The hub's verdicts go last: each one is about a workflow whose latest event may be newer than the verdict.
    const envs = [...byId({ ...snap.workflows, ...prefixed(snap.locks) }), ...byId(snap.health)];
    for (const env of envs) {
      this.store.apply(topic, { id: env.id, type: env.type || 'progress', data: env.data },
        { time: this.toLocal(idTime(env.id), Date.now()), source: 'snapshot' });
    }
    this.counts.snapshots++;
    pos.lastId = cursor;
    if (pos.target && cmpId(pos.target, cursor) <= 0) pos.target = '';
    const held = pos.gate || [];
    pos.gate = null;
    // Events that raced the snapshot request are either inside it (drop) or after it (apply, in order).
    for (const item of held) {
      if (item.id && cmpId(item.id, cursor) <= 0) this.counts.covered++;
      else this.deliver(topic, item);
    }
    this.onChange();
    return cursor;
  }

  /**
   * Ends a replay whose target never arrives (trimmed meanwhile, or counted from a stale /topics answer) so the
   * indicator cannot stay on "replaying" forever.
   */
  tick(now) {
    if (this.state !== 'replaying' || now - this.lastMessageAt < 5000) return;
    for (const pos of this.positions.values()) pos.target = '';
    this.resume();
  }

  cursor() {
    return formatCursor(this.topics, (t) => this.positions.get(t).lastId);
  }

  open() {
    clearTimeout(this.retryTimer);
    if (this.es) this.es.close();
    const q = new URLSearchParams();
    for (const t of this.topics) q.append('topic', t);
    // Our own positions, not the last cursor the server sent: events held back while a snapshot reloads are not
    // applied yet, so resuming from them is the conservative choice (repeats are dropped by id).
    q.set('last_event_id', this.cursor());
    const es = new EventSource(`/events?${q}`);
    this.es = es;
    this.esLastId = '';
    es.onopen = () => this.onOpen(es);
    es.onerror = () => this.onError(es);
    const onMessage = (ev) => this.onMessage(es, ev);
    for (const type of this.types) es.addEventListener(type, onMessage);
    // The hub's control frames never carry an id; one with an id is a stored event posing as one, and is ignored.
    es.addEventListener('auth-expired', (ev) => { if (ev.lastEventId === this.esLastId) this.onAuthExpired(es); });
  }

  /**
   * The hub ends a stream when its token expires. Whatever renews the cookie (the page that embeds the console, or a
   * sign-in in another tab) has had its chance by the time we reopen from our own positions: nothing is lost, and a
   * token still expired answers 401, which onError turns into slower retries.
   */
  onAuthExpired(es) {
    if (es !== this.es || this.closed) return;
    es.close();
    this.attempt++;
    const wait = backoff(this.attempt);
    this.retryTimer = setTimeout(() => this.open(), wait);
    this.setState('reconnecting', `credentials expired; retrying in ${Math.round(wait / 1000)} s`);
  }

  onOpen(es) {
    if (es !== this.es) return;
    const now = Date.now();
    if (this.counts.opens > 0) this.counts.reconnects++;
    this.counts.opens++;
    this.openedAt = now;
    this.lastMessageAt = now;
    this.replayRun = 0;
    for (const pos of this.positions.values()) pos.target = '';
    this.findReplayTargets(es);
  }

  /**
   * Learns how far each topic's stored history reaches, so the events up to there count as replayed missed
   * events and the indicator says "replaying" until they are through.
   */
  async findReplayTargets(es) {
    let list = null;
    try {
      list = await Promise.race([this.fetchJSON('/topics'), sleep(3000).then(() => null)]);
    } catch { /* the stream works without targets; it just cannot say how much it is catching up */ }
    if (es !== this.es || es.readyState !== EventSource.OPEN) return;
    const lastIds = new Map((list?.topics || []).map((t) => [t.name, t.last_id]));
    for (const [topic, pos] of this.positions) {
      const last = lastIds.get(topic);
      if (!last || !pos.lastId || cmpId(last, pos.lastId) <= 0) continue;
      pos.target = last;
    }
    this.resume();
  }

  /** The state once nothing special is going on: live, or replaying while targets are still ahead. */
  resume() {
    if (!this.es || this.es.readyState !== EventSource.OPEN) return;
    if ([...this.positions.values()].some((p) => p.gate)) return;
    const pending = [...this.positions.values()].some((p) => p.target);
    if (pending) this.setState('replaying', String(this.replayRun));
    else { this.attempt = 0; this.setState('live'); }
  }

  onError(es) {
    if (es !== this.es || this.closed) return;
    this.attempt++;
    this.lastMessageAt = Date.now();
    if (es.readyState === EventSource.CLOSED) {
      // The browser gives up after a refused response (429/503, a proxy page); we keep trying, more slowly.
      const wait = backoff(this.attempt);
      this.retryTimer = setTimeout(() => this.open(), wait);
      this.setState('reconnecting', `attempt ${this.attempt}, next in ${Math.round(wait / 1000)} s`);
    } else {
      this.setState('reconnecting', `attempt ${this.attempt}`);
    }
  }

  onMessage(es, ev) {
    // EventSource's own connection "error" is a plain Event; only a MessageEvent is an `event: error` frame.
    if (es !== this.es || !(ev instanceof MessageEvent)) return;
    const now = Date.now();
    this.lastMessageAt = now;
    // MessageEvent.lastEventId repeats the previous id when an event carries none, so "unchanged" means ephemeral.
    const fresh = ev.lastEventId !== this.esLastId;
    if (fresh) this.esLastId = ev.lastEventId;
    let data;
    try { data = JSON.parse(ev.data); } catch { data = ev.data; }
    if (ev.type === 'reset') { if (!fresh) this.onReset(data); return; }
    if (!fresh) { this.onEphemeral(ev.type, data, now); return; }
    const where = parseEventId(ev.lastEventId, this.topics);
    if (!where || !this.positions.has(where.topic)) {
      this.store.note(`Event with an unexpected id ${JSON.stringify(ev.lastEventId)} shown without a topic`, 'warn');
      this.store.apply('', { type: ev.type, data }, { time: now, source: 'live' });
      this.onChange();
      return;
    }
    const item = { id: where.id, type: ev.type, data, received: now };
    const pos = this.positions.get(where.topic);
    if (pos.gate) pos.gate.push(item);
    else this.deliver(where.topic, item);
    this.onChange();
  }

  deliver(topic, item) {
    const pos = this.positions.get(topic);
    if (pos.lastId && cmpId(item.id, pos.lastId) <= 0) { this.counts.duplicates++; return; }
    pos.lastId = item.id;
    const serverMs = idTime(item.id);
    const time = this.toLocal(serverMs, item.received);
    // Stored before this connection opened means missed while away, whether or not /topics has answered yet.
    const replay = (pos.target && cmpId(item.id, pos.target) <= 0) || time < this.openedAt;
    if (pos.target && cmpId(item.id, pos.target) >= 0) pos.target = '';
    if (replay) {
      this.counts.replayed++;
      this.replayRun++;
      if (this.state === 'replaying') this.detail = String(this.replayRun);
    } else {
      this.sampleClock(item.received, serverMs);
    }
    if (!pos.target && this.state === 'replaying') this.resume();
    const source = replay ? 'replay' : 'live';
    if (this.store.apply(topic, item, { time, source }) === 'duplicate') this.counts.duplicates++;
    else this.counts.events++;
  }

  onEphemeral(type, data, now) {
    this.counts.ephemeral++;
    let topic = this.topics[0];
    if (this.topics.length > 1) topic = data && this.positions.has(data.topic) ? data.topic : '';
    if (this.store.apply(topic, { type, data }, { time: now, source: 'ephemeral' }) === 'duplicate') {
      this.counts.duplicates++;
    }
    this.onChange();
  }

  async onReset(data) {
    const topic = this.topics.length === 1 ? this.topics[0] : data?.topic;
    this.counts.resets++;
    if (!this.positions.has(topic)) {
      this.store.note(`Reset for unknown topic ${JSON.stringify(topic)}`, 'warn');
      return;
    }
    const reason = data?.reason || 'reset';
    this.setState('reset', `${topic}: ${reason}`);
    this.store.note(`History of ${topic} no longer reaches our position (${reason}; oldest stored ` +
      `${data?.oldest || '?'}). Reloading its snapshot.`, 'warn', topic);
    await this.loadSnapshot(topic);
    const cursor = this.positions.get(topic).lastId;
    this.lastReset = { topic, reason, oldest: data?.oldest || '', cursor, at: Date.now() };
    this.store.note(`Snapshot of ${topic} reloaded at ${cursor}.`, 'info', topic);
    this.resume();
    this.onChange();
  }

  /**
   * Keeps an estimate of how far the browser's clock is from Redis's, from the fastest recent deliveries, so that
   * ages computed from stream ids (stall detection, lease countdowns) survive a skewed laptop clock.
   */
  sampleClock(received, serverMs) {
    if (!Number.isFinite(serverMs)) return;
    const d = received - serverMs;
    this.latencies.push(d);
    if (this.latencies.length > 100) this.latencies.shift();
    this.clockSamples.push(d);
    if (this.clockSamples.length > 200) this.clockSamples.shift();
    if (this.clockSamples.length % 20 === 1) this.clockOffset = Math.min(...this.clockSamples);
  }

  toLocal(serverMs, fallback) {
    return Number.isFinite(serverMs) ? Math.min(serverMs + this.clockOffset, fallback) : fallback;
  }

  /** The median time from XADD to this browser over the last live events, in ms. */
  latency() {
    if (!this.latencies.length) return NaN;
    const s = [...this.latencies].sort((a, b) => a - b);
    return s[s.length >> 1];
  }
}

export async function getJSON(url) {
  const res = await fetch(url, { headers: { Accept: 'application/json' }, cache: 'no-store' });
  let body = null;
  try { body = await res.json(); } catch { /* reported below with the status */ }
  if (!res.ok) throw new Error(body?.error || `${res.status} ${res.statusText}`);
  return body;
}

function backoff(attempt) {
  const base = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(attempt, 5));
  return base / 2 + Math.random() * base / 2;
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/** A copy of a map with its keys made distinct from a workflow map's, so the two can be merged. */
function prefixed(map) {
  return Object.fromEntries(Object.entries(map || {}).map(([k, v]) => [`\u0000${k}`, v]));
}
