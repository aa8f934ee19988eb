// The console's side of the stream. The connection itself (per-topic positions, snapshots before streaming and after
// a reset, dedupe by id and idempotency key, a refused or expired stream, backoff) is the hub's JavaScript client,
// clients/js, served at /client/; this file turns what it delivers into the board: it applies snapshots and events
// to the store, says "replaying" while missed events are coming in, learns the hub's clock, and keeps the counters
// and the connection states the page shows.
import { HubClient, cmpId, idTime } from './client/hubclient.js';
import { ServerClock } from './clock.js';

const STATE_HISTORY = 200;

export class Feed {
  /**
   * probe asks the hub who we are (GET /auth/session) after a refused stream; onSignedOut hears its 401 answer.
   * @param {{topics:string[], store:import('./store.js').Store, types?:string[], onChange?:()=>void,
   *          probe?:()=>Promise<{status:number, body:any}|null>,
   *          onSignedOut?:(answer:{status:number, body:any})=>void, onPresence?:(p:object)=>void}} opts
   */
  constructor({ topics, store, types = [], onChange = () => {}, probe = async () => null, onSignedOut = () => {},
    onPresence = () => {} }) {
    this.topics = topics;
    this.store = store;
    this.onChange = onChange;
    this.client = new HubClient({
      topics, types, probe, presence: true,
      onPresence: (p) => { onPresence(p); this.onChange(); },
      onEvent: (ev) => this.onEvent(ev),
      onSnapshot: ({ topic, snapshot, cursor }) => { this.paint(topic, snapshot, cursor); this.onChange(); },
      onReset: (r) => this.onReset(r),
      onDenied: ({ topic, reason }) => this.onDenied(topic, reason),
      onState: ({ state, detail }) => this.onClientState(state, detail),
      onWarning: ({ message, topic }) => { this.store.note(message, 'warn', topic); this.onChange(); },
      // The console's sign-in panel takes it from here; begin() resumes the client after the new sign-in.
      onAuthExpired: ({ answer }) => { onSignedOut(answer); return false; },
    });
    /** Per topic, the newest stored id when the stream opened: events up to it are missed ones coming in. */
    this.targets = new Map();
    this.state = 'connecting';
    this.detail = '';
    this.history = [];
    this.replayed = 0;
    this.replayRun = 0;
    this.opensSeen = 0;
    this.lastMessageAt = NaN;
    this.lastReset = null;
    this.clock = new ServerClock();
    this.setState('connecting');
  }

  get denied() { return this.client.denied; }
  get attempt() { return this.client.attempt; }

  get counts() {
    const s = this.client.stats;
    return { events: s.events, replayed: this.replayed, resets: s.resets, reconnects: s.reconnects,
      duplicates: s.duplicateIds + s.duplicateKeys, ephemeral: s.ephemeral, covered: s.covered,
      snapshots: s.snapshots, opens: s.opens };
  }

  active() { return this.client.active(); }
  cursor() { return this.client.cursor(); }
  grant(patterns) { return this.client.grant(patterns); }

  /** Starts, or starts again after a sign-in, from the console's own positions. */
  start() { return this.client.start(); }

  /** Ends every request until start() is called again. */
  stop(state, detail = '') {
    this.client.pause();
    this.setState(state, detail);
  }

  setState(state, detail = '') {
    if (state === this.state && detail === this.detail && this.history.length) return;
    this.state = state;
    this.detail = detail;
    this.history.push({ state, detail, attempt: this.attempt, at: Date.now() });
    if (this.history.length > STATE_HISTORY) this.history.shift();
    this.onChange();
  }

  /** The client's states in the pill's words; a new connection is "live" only once its replay targets are known. */
  onClientState(state, detail) {
    if (state === 'backing-off' || state === 'connecting' || state === 'reset') this.lastMessageAt = Date.now();
    if (state === 'live') {
      if (this.client.stats.opens !== this.opensSeen) this.onOpen();
      else this.resume();
      return;
    }
    const shown = { 'backing-off': 'reconnecting', connecting: 'connecting', reset: 'reset', 'signed-out': 'signed-out',
      forbidden: 'forbidden' }[state];
    if (shown) this.setState(shown, detail);
  }

  onOpen() {
    this.opensSeen = this.client.stats.opens;
    this.lastMessageAt = Date.now();
    this.replayRun = 0;
    this.targets.clear();
    this.findReplayTargets(this.opensSeen);
  }

  /**
   * Learns how far each topic's stored history reaches, so the events up to there count as replayed missed
   * events and the indicator says "replaying" until they are through.
   */
  async findReplayTargets(open) {
    let list = null;
    try {
      list = await Promise.race([this.client.getJSON('/topics'), new Promise((r) => setTimeout(r, 3000, null))]);
    } catch { /* the stream works without targets; it just cannot say how much it is catching up */ }
    if (open !== this.client.stats.opens || this.client.state !== 'live') return;
    const lastIds = new Map((list?.topics || []).map((t) => [t.name, t.last_id]));
    for (const topic of this.client.active()) {
      const last = lastIds.get(topic);
      const at = this.client.position(topic);
      if (last && at && cmpId(last, at) > 0) this.targets.set(topic, last);
    }
    this.resume();
  }

  /** The state once nothing special is going on: live, or replaying while targets are still ahead. */
  resume() {
    if (this.client.state !== 'live') return;
    if (this.targets.size) this.setState('replaying', String(this.replayRun));
    else this.setState('live');
  }

  /**
   * Ends a replay whose target never arrives (trimmed meanwhile, or counted from a stale /topics answer) so the
   * indicator cannot stay on "replaying" forever.
   */
  tick(now) {
    if (this.state !== 'replaying' || now - this.lastMessageAt < 5000) return;
    this.targets.clear();
    this.resume();
  }

  /** Replaces a topic's part of the board with its snapshot. */
  paint(topic, snap, cursor) {
    this.store.clearTopic(topic);
    const byId = (list) => Object.values(list || {}).filter((e) => e && typeof e === 'object')
      .sort((a, b) => cmpId(a.id, b.id));
    // The hub's verdicts go last: each one is about a workflow whose latest event may be newer than the verdict.
    const envs = [...byId({ ...snap.workflows, ...prefixed(snap.locks) }), ...byId(snap.health)];
    for (const env of envs) {
      this.store.apply(topic, { id: env.id, type: env.type || 'progress', data: env.data },
        { time: this.clock.toLocal(idTime(env.id), Date.now()), source: 'snapshot' });
    }
    // The snapshot holds each workflow's latest event; its first event's id says when it began.
    for (const [workflow, id] of Object.entries(snap.starts || {})) {
      const at = idTime(id);
      if (Number.isFinite(at)) this.store.started(topic, workflow, this.clock.toLocal(at, Date.now()));
    }
    const target = this.targets.get(topic);
    if (target && cmpId(target, cursor) <= 0) this.targets.delete(topic);
  }

  onReset({ topic, reason, oldest, snapshot, cursor }) {
    this.store.note(`History of ${topic} no longer reaches our position (${reason}; oldest stored ` +
      `${oldest || '?'}). Reloaded its snapshot.`, 'warn', topic);
    if (snapshot) this.paint(topic, snapshot, cursor);
    this.lastReset = { topic, reason, oldest, cursor, at: Date.now() };
    this.store.note(`Snapshot of ${topic} reloaded at ${cursor}.`, 'info', topic);
    this.onChange();
  }

  onDenied(topic, reason) {
    this.store.clearTopic(topic);
    this.store.note(`You may not watch ${topic}: ${reason}.`, 'warn', topic);
    this.onChange();
  }

  onEvent(ev) {
    this.lastMessageAt = ev.received;
    if (ev.ephemeral || !ev.topic) {
      this.store.apply(ev.topic, { type: ev.type, data: ev.data },
        { time: ev.received, source: ev.ephemeral ? 'ephemeral' : 'live' });
      this.onChange();
      return;
    }
    const serverMs = idTime(ev.id);
    const time = this.clock.toLocal(serverMs, ev.received);
    const target = this.targets.get(ev.topic);
    // Stored before this connection opened means missed while away, whether or not /topics has answered yet.
    const replay = (target && cmpId(ev.id, target) <= 0) || time < this.client.openedAt;
    if (target && cmpId(ev.id, target) >= 0) this.targets.delete(ev.topic);
    if (replay) {
      this.replayed++;
      this.replayRun++;
      if (this.state === 'replaying') this.detail = String(this.replayRun);
    } else {
      this.clock.sample(ev.received, serverMs);
    }
    if (!this.targets.size && this.state === 'replaying') this.resume();
    this.store.apply(ev.topic, ev, { time, source: replay ? 'replay' : 'live' });
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
