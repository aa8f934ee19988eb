// The connection to the hub: first paint from each topic's snapshot, then one EventSource from the snapshots' cursor.
// Positions are tracked per topic so that nothing is applied twice: not across EventSource reconnects, not across
// our own reopen after a refused connection, not across a reset that reloads a snapshot, not across a sign-in.
// A refusal of our credentials pauses every request until the page signs in again (no retry loop against a 401);
// a topic the credentials do not cover is set aside and the others keep streaming.
import { cmpId, formatCursor, idTime, parseEventId } from './ids.js';
import { ServerClock } from './clock.js';
import { backoff, getJSON, sleep } from './http.js';
import { grants } from './session.js';

// EventSource only delivers named events to listeners registered by that exact name, so the types the console can
// show are listed here; `?types=a,b` in the page URL adds more.
export const KNOWN_TYPES = ['health', 'progress', 'lock', 'reset', 'message', 'log', 'info', 'notice', 'warn', 'warning',
  'error', 'debug', 'trace', 'status', 'step', 'agent', 'metric', 'metrics', 'alert', 'audit', 'deploy', 'build',
  'test', 'output', 'stdout', 'stderr', 'dispatch', 'lease', 'workflow', 'task', 'job', 'note', 'system'];

const STATE_HISTORY = 200;

export class Feed {
  /**
   * probe asks the hub who we are (GET /auth/session) after a refused stream; onSignedOut hears its 401 answer.
   * @param {{topics:string[], store:import('./store.js').Store, types?:string[], onChange?:()=>void,
   *          fetchJSON?:(url:string)=>Promise<any>, probe?:()=>Promise<{status:number, body:any}|null>,
   *          onSignedOut?:(answer:{status:number, body:any})=>void}} opts
   */
  constructor({ topics, store, types = [], onChange = () => {}, fetchJSON = getJSON, probe = async () => null,
    onSignedOut = () => {} }) {
    this.topics = topics;
    this.store = store;
    this.types = [...new Set([...KNOWN_TYPES, ...types])];
    this.onChange = onChange;
    this.fetchJSON = fetchJSON;
    this.probe = probe;
    this.onSignedOut = onSignedOut;
    // gate: events held until the topic's snapshot is applied; a topic starts out waiting for its snapshot.
    this.positions = new Map(topics.map((t) => [t, { lastId: '', gate: [], target: '', loading: null }]));
    /** Topics the credentials may not watch, with the hub's reason; they are left out of the stream. */
    this.denied = new Map();
    this.paused = false;
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
    this.clock = new ServerClock();
    this.closed = false;
    this.setState('connecting');
  }

  /** The topics the stream carries: those the credentials cover. */
  active() {
    return this.topics.filter((t) => !this.denied.has(t));
  }

  /**
   * Starts, or starts again after a sign-in: loads the snapshots still missing, then opens the stream from our own
   * positions, so whatever was published meanwhile is replayed once.
   */
  async start() {
    this.paused = false;
    await Promise.all(this.active().filter((t) => this.positions.get(t).gate).map((t) => this.loadSnapshot(t)));
    if (this.closed || this.paused) return;
    if (!this.active().length) { this.stop('forbidden', 'no topic may be watched'); return; }
    this.open();
  }

  /** Ends every request until start() is called again. */
  stop(state, detail = '') {
    this.paused = true;
    clearTimeout(this.retryTimer);
    if (this.es) this.es.close();
    this.es = null;
    this.setState(state, detail);
  }

  /** The hub refused our credentials: stop, and say so once. */
  signedOut(answer) {
    if (this.paused && this.state === 'signed-out') return;
    this.stop('signed-out', answer?.body?.error || 'authentication required');
    this.onSignedOut(answer);
  }

  /**
   * Sets aside the topics that the subscribe patterns do not cover (and takes back those they now do). Returns
   * whether anything changed.
   */
  grant(patterns) {
    let changed = false;
    for (const t of this.topics) {
      const allowed = grants(patterns, t);
      if (allowed && this.denied.has(t)) {
        this.denied.delete(t);
        this.positions.get(t).gate = [];
        changed = true;
      } else if (!allowed && !this.denied.has(t)) {
        this.deny(t, 'your sign-in does not grant it');
        changed = true;
      }
    }
    return changed;
  }

  deny(topic, reason) {
    this.denied.set(topic, reason);
    this.store.clearTopic(topic);
    this.positions.get(topic).gate = null;
    this.store.note(`You may not watch ${topic}: ${reason}.`, 'warn', topic);
    this.onChange();
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

  /**
   * Loads a topic's snapshot, retrying with backoff until it works; the topic's events wait meanwhile. A refusal of
   * the credentials ends the retries: 401 signs the page out, 403 sets the topic aside.
   */
  loadSnapshot(topic) {
    const pos = this.positions.get(topic);
    pos.gate = pos.gate || [];
    pos.loading = pos.loading || this.fetchSnapshot(topic).finally(() => { pos.loading = null; });
    return pos.loading;
  }

  async fetchSnapshot(topic) {
    for (let attempt = 0; !this.closed && !this.paused; attempt++) {
      try {
        const snap = await this.fetchJSON(`/topics/${encodeURIComponent(topic)}/snapshot`);
        if (this.paused || this.denied.has(topic)) return false;
        this.applySnapshot(topic, snap);
        return true;
      } catch (err) {
        if (err.status === 401) { this.signedOut({ status: 401, body: err.body }); return false; }
        if (err.status === 403) { this.deny(topic, err.message); return false; }
        this.store.note(`Snapshot of ${topic} failed: ${err.message}; retrying`, 'warn', topic);
        this.onChange();
        await sleep(backoff(attempt));
      }
    }
    return false;
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
        { time: this.clock.toLocal(idTime(env.id), Date.now()), source: 'snapshot' });
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
    return formatCursor(this.active(), (t) => this.positions.get(t).lastId);
  }

  open() {
    clearTimeout(this.retryTimer);
    if (this.es) this.es.close();
    if (this.paused || this.closed) return;
    const q = new URLSearchParams();
    for (const t of this.active()) q.append('topic', t);
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
   * The hub ends a stream when its token expires. One question to the hub tells whether the cookie was renewed
   * meanwhile (another tab, the page that embeds the console): then we reopen from our own positions at once, and
   * nothing is lost; otherwise the page is signed out until the operator signs in again.
   */
  async onAuthExpired(es) {
    if (es !== this.es || this.closed) return;
    es.close();
    this.attempt++;
    this.setState('reconnecting', 'credentials expired');
    const answer = await this.probe();
    if (es !== this.es || this.closed || this.paused) return;
    if (answer?.status === 401) { this.signedOut(answer); return; }
    this.retryLater(answer?.status === 200 && this.attempt <= 1 ? 0 : backoff(this.attempt), 'credentials expired');
  }

  retryLater(wait, why) {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.open(), wait);
    this.setState('reconnecting', `${why}; next in ${Math.round(wait / 1000)} s`);
  }

  /**
   * The browser gives up after a refused response and does not say which. One probe per refusal, and refusals
   * come one per backoff step: a 401 signs the page out; topics the grant no longer covers are set aside and the
   * rest reopen; anything else (429, 503, a proxy page) is retried more slowly.
   */
  async onRefused(es) {
    const answer = await this.probe();
    if (es !== this.es || this.closed || this.paused) return;
    if (answer?.status === 401) { this.signedOut(answer); return; }
    if (answer?.status === 200 && this.grant(answer.body?.subscribe)) { this.start(); return; }
    this.retryLater(backoff(this.attempt), `attempt ${this.attempt}`);
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
      this.setState('reconnecting', `attempt ${this.attempt}`);
      this.onRefused(es);
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
    const where = parseEventId(ev.lastEventId, this.active());
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
    const time = this.clock.toLocal(serverMs, item.received);
    // Stored before this connection opened means missed while away, whether or not /topics has answered yet.
    const replay = (pos.target && cmpId(item.id, pos.target) <= 0) || time < this.openedAt;
    if (pos.target && cmpId(item.id, pos.target) >= 0) pos.target = '';
    if (replay) {
      this.counts.replayed++;
      this.replayRun++;
      if (this.state === 'replaying') this.detail = String(this.replayRun);
    } else {
      this.clock.sample(item.received, serverMs);
    }
    if (!pos.target && this.state === 'replaying') this.resume();
    const source = replay ? 'replay' : 'live';
    if (this.store.apply(topic, item, { time, source }) === 'duplicate') this.counts.duplicates++;
    else this.counts.events++;
  }

  onEphemeral(type, data, now) {
    this.counts.ephemeral++;
    const active = this.active();
    let topic = active[0];
    if (active.length > 1) topic = data && active.includes(data.topic) ? data.topic : '';
    if (this.store.apply(topic, { type, data }, { time: now, source: 'ephemeral' }) === 'duplicate') {
      this.counts.duplicates++;
    }
    this.onChange();
  }

  async onReset(data) {
    const active = this.active();
    const topic = active.length === 1 ? active[0] : data?.topic;
    this.counts.resets++;
    if (!active.includes(topic)) {
      this.store.note(`Reset for unknown topic ${JSON.stringify(topic)}`, 'warn');
      return;
    }
    const reason = data?.reason || 'reset';
    this.setState('reset', `${topic}: ${reason}`);
    this.store.note(`History of ${topic} no longer reaches our position (${reason}; oldest stored ` +
      `${data?.oldest || '?'}). Reloading its snapshot.`, 'warn', topic);
    if (!(await this.loadSnapshot(topic))) return;
    const cursor = this.positions.get(topic).lastId;
    this.lastReset = { topic, reason, oldest: data?.oldest || '', cursor, at: Date.now() };
    this.store.note(`Snapshot of ${topic} reloaded at ${cursor}.`, 'info', topic);
    this.resume();
    this.onChange();
  }

  /** The median time from XADD to this browser over the last live events, in ms. */
  latency() {
    return this.clock.latency();
  }
}

/** A copy of a map with its keys made distinct from a workflow map's, so the two can be merged. */
function prefixed(map) {
  return Object.fromEntries(Object.entries(map || {}).map(([k, v]) => [`\u0000${k}`, v]));
}
