// A client of the hub's /events stream for browsers and Node: one EventSource for one or several topics, a position
// per topic so that nothing is delivered twice or skipped (across EventSource reconnects, our own reopen after a
// refused connection, a reset that reloads a snapshot, a sign-in), the snapshot as the first paint, dedupe by
// idempotency key, and sign-in hooks. No dependency: the EventSource and fetch of the platform, or injected ones.
import { backoff, cmpId, formatCursor, grants, parseEventId } from './ids.js';
import { getJSON, sessionCall } from './request.js';

export { backoff, cmpId, formatCursor, grants, idTime, parseEventId, parseId, TOPIC_RE, validTopic } from './ids.js';

// EventSource only delivers named events to listeners registered by that exact name, so the usual types are listed
// here; the option types adds more.
export const EVENT_TYPES = ['health', 'progress', 'lock', 'message', 'log', 'info', 'notice', 'warn', 'warning',
  'error', 'debug', 'trace', 'status', 'step', 'agent', 'metric', 'metrics', 'alert', 'audit', 'deploy', 'build',
  'test', 'output', 'stdout', 'stderr', 'dispatch', 'lease', 'workflow', 'task', 'job', 'note', 'system'];

const OPEN = 1, CLOSED = 2; // EventSource.readyState, the same in every implementation

export class HubClient {
  #opts; #hooks; #es = null; #esLastId = ''; #timer = 0; #paused = true; #closed = false; #gen = 0; #authStreak = 0;
  #pos; #keys = new Set(); #token; #wakers = new Set();

  /** @param {import('./hubclient.js').HubClientOptions} opts */
  constructor(opts) {
    const { topics, url = '', token = '', positions = {}, storage = null, storageKey = 'hubclient' } = opts || {};
    if (!Array.isArray(topics)) throw new TypeError('HubClient: topics must be an array of topic names');
    const ES = opts.EventSource || globalThis.EventSource;
    if (typeof ES !== 'function') throw new TypeError('HubClient: no EventSource here; pass one as the EventSource option');
    this.#opts = { base: url.replace(/\/+$/, ''), ES, fetch: opts.fetch || globalThis.fetch.bind(globalThis),
      withCredentials: !!opts.withCredentials, storage, storageKey, snapshots: opts.snapshots !== false,
      dedupeLimit: opts.dedupeLimit ?? 50000, pace: opts.backoff || {}, probe: opts.probe || (() => this.session()),
      types: [...new Set([...EVENT_TYPES, ...(opts.types || [])])], presence: !!opts.presence };
    const noop = () => {};
    this.#hooks = { onEvent: noop, onSnapshot: noop, onReset: noop, onDenied: noop, onState: noop, onWarning: noop,
      onPresence: noop, onAuthExpired: () => false };
    for (const k of Object.keys(this.#hooks)) if (typeof opts[k] === 'function') this.#hooks[k] = opts[k];
    this.#token = token;
    this.topics = [...new Set(topics)];
    this.#pos = new Map(this.topics.map((t) => {
      const lastId = positions[t] || this.#stored(t) || '';
      return [t, { lastId, gate: null, want: this.#opts.snapshots && !lastId, loading: null }];
    }));
    /** Topics the credentials may not watch, with the hub's reason; they are left out of the stream. */
    this.denied = new Map();
    this.state = 'idle';
    this.detail = '';
    /** Failed connections since the stream was last open. */
    this.attempt = 0;
    this.openedAt = NaN;
    this.stats = { events: 0, ephemeral: 0, duplicateIds: 0, duplicateKeys: 0, covered: 0, resets: 0, snapshots: 0,
      opens: 0, reconnects: 0 };
  }

  /** The topics the stream carries: those the credentials cover. */
  active() { return this.topics.filter((t) => !this.denied.has(t)); }

  /** The last position delivered (or taken from a snapshot) for topic; '' before any. */
  position(topic) { return this.#pos.get(topic)?.lastId || ''; }

  /** The resume cursor of the active topics, as the hub reads it in last_event_id. */
  cursor() { return formatCursor(this.active(), (t) => this.position(t)); }

  /**
   * Starts, or starts again after a pause or a sign-in: loads the snapshots still missing, then opens the stream from
   * our own positions, so whatever was published meanwhile is delivered once.
   */
  async start() {
    if (this.#closed) return;
    this.#paused = false;
    if (this.state === 'idle' || this.state === 'paused' || this.state === 'signed-out') this.#setState('connecting');
    const missing = this.active().filter((t) => this.#pos.get(t).want);
    await Promise.all(missing.map((t) => this.#loadSnapshot(t, 'start')));
    if (this.#closed || this.#paused) return;
    if (!this.active().length) { this.pause('forbidden', 'no topic may be watched'); return; }
    this.#open();
  }

  /** Reopens at once, with a new bearer token when given; what start() does after a sign-in. */
  resume({ token } = {}) {
    this.#gen++;
    if (typeof token === 'string') this.#token = token;
    return this.start();
  }

  /** Ends every request until start() or resume(). */
  pause(state = 'paused', detail = '') {
    this.#paused = true;
    clearTimeout(this.#timer);
    this.#es?.close();
    this.#es = null;
    for (const wake of [...this.#wakers]) wake();
    this.#setState(state, detail);
  }

  close() {
    this.pause('closed');
    this.#closed = true;
  }

  /**
   * Sets aside the topics that the subscribe patterns do not cover, and takes back those they now do (from a new
   * snapshot when snapshots are on). Returns whether anything changed; start() applies it to the stream.
   */
  grant(patterns) {
    let changed = false;
    for (const t of this.topics) {
      const allowed = grants(patterns, t);
      if (allowed && this.denied.has(t)) {
        this.denied.delete(t);
        Object.assign(this.#pos.get(t), { gate: null, want: this.#opts.snapshots });
        changed = true;
      } else if (!allowed && !this.denied.has(t)) {
        this.#deny(t, 'your sign-in does not grant it');
        changed = true;
      }
    }
    return changed;
  }

  /** GETs a JSON answer from the hub; a refusal throws an Error carrying status and the hub's JSON error body. */
  getJSON(path) { return getJSON(this.#opts.fetch, this.#opts.base + path, this.#init('GET')); }

  /**
   * Who watches topic, across every hub: {topic, count, hubs} and, for credentials with the presence grant, users and
   * truncated. Rejects as getJSON does (403 without the subscribe grant, 404 when the hub has presence off).
   */
  presence(topic) { return this.getJSON(`/topics/${encodeURIComponent(topic)}/presence`); }

  /** GET /auth/session: who the credentials name. Never throws: an unreachable hub is status 0. */
  session() { return this.#sessionCall('GET'); }

  /** POST /auth/session: trades a token for the hub's HttpOnly session cookie (browsers); the token goes alone. */
  signIn(token) {
    const init = this.#init('POST');
    delete init.headers.Authorization;
    return sessionCall(this.#opts.fetch, `${this.#opts.base}/auth/session`, { ...init, body: new URLSearchParams({ token }) });
  }

  /** DELETE /auth/session: clears the cookie. */
  signOut() { return this.#sessionCall('DELETE'); }

  #sessionCall(method) {
    return sessionCall(this.#opts.fetch, `${this.#opts.base}/auth/session`, this.#init(method));
  }

  #init(method) {
    const headers = { Accept: 'application/json' };
    if (this.#token) headers.Authorization = `Bearer ${this.#token}`;
    return { method, headers, cache: 'no-store', credentials: this.#opts.withCredentials ? 'include' : 'same-origin' };
  }

  #setState(state, detail = '') {
    if (state === this.state && detail === this.detail) return;
    this.state = state;
    this.detail = detail;
    this.#call('onState', { state, detail, attempt: this.attempt });
  }

  #call(hook, arg) {
    try {
      return this.#hooks[hook](arg);
    } catch (err) {
      setTimeout(() => { throw err; }); // the application's bug, reported where it is seen, not swallowed
      return undefined;
    }
  }

  #warn(message, topic = '') { this.#call('onWarning', { message, topic }); }

  #stored(topic) {
    try { return this.#opts.storage?.getItem(`${this.#opts.storageKey}:${topic}`) || ''; } catch { return ''; }
  }

  #persist(topic, id) {
    try { this.#opts.storage?.setItem(`${this.#opts.storageKey}:${topic}`, id); } catch { /* storage full or off */ }
  }

  #deny(topic, reason) {
    this.denied.set(topic, reason);
    Object.assign(this.#pos.get(topic), { gate: null, want: false });
    this.#call('onDenied', { topic, reason });
  }

  #open() {
    clearTimeout(this.#timer);
    this.#es?.close();
    this.#es = null;
    if (this.#paused || this.#closed) return;
    const q = new URLSearchParams();
    for (const t of this.active()) q.append('topic', t);
    // Our own positions, not the last cursor the hub sent: events held back while a snapshot reloads are not
    // delivered yet, so resuming from them is the conservative choice (repeats are dropped by id).
    const cursor = this.cursor();
    if (cursor) q.set('last_event_id', cursor);
    if (this.#opts.presence) q.set('presence', '1');
    const es = new this.#opts.ES(`${this.#opts.base}/events?${q}`, this.#esInit());
    this.#es = es;
    this.#esLastId = '';
    es.onopen = () => this.#onOpen(es);
    es.onerror = () => this.#onError(es);
    const onMessage = (ev) => this.#onMessage(es, ev);
    for (const type of [...this.#opts.types, 'reset']) es.addEventListener(type, onMessage);
    // The hub's control frames never carry an id; one with an id is a stored event posing as one, and is ignored.
    es.addEventListener('auth-expired', (ev) => { if (ev.lastEventId === this.#esLastId) this.#authExpired(es); });
    // Presence frames carry no id either; they tell who watches a topic now, and never move a position.
    es.addEventListener('presence', (ev) => {
      if (es !== this.#es || ev.lastEventId !== this.#esLastId) return;
      let data;
      try { data = JSON.parse(ev.data); } catch { return; }
      if (data && this.#pos.has(data.topic)) this.#call('onPresence', data);
    });
  }

  // Browsers ignore the fetch member; Node's eventsource package sends the bearer token through it, on every
  // reconnect too, so a token that resume() replaced is the one the next attempt carries.
  #esInit() {
    const init = { withCredentials: this.#opts.withCredentials };
    init.fetch = (input, req = {}) => this.#opts.fetch(input, {
      ...req, headers: { ...req.headers, ...(this.#token ? { Authorization: `Bearer ${this.#token}` } : {}) },
    });
    return init;
  }

  #onOpen(es) {
    if (es !== this.#es) return;
    if (this.stats.opens > 0) this.stats.reconnects++;
    this.stats.opens++;
    this.openedAt = Date.now();
    this.attempt = 0;
    this.#setState([...this.#pos.values()].some((p) => p.gate) ? 'reset' : 'live');
  }

  #onError(es) {
    if (es !== this.#es || this.#closed) return;
    this.attempt++;
    // While CONNECTING the EventSource comes back by itself after the hub's retry: hint, with the Last-Event-ID it
    // last saw; CLOSED means it gave up on a refused response, and says nothing of why.
    this.#setState('backing-off', `attempt ${this.attempt}`);
    if (es.readyState === CLOSED) this.#refused(es);
  }

  /**
   * One probe per refusal, and refusals come one per backoff step: a 401 signs the client out; topics the grant no
   * longer covers are set aside and the rest reopen; anything else (429, 503, a proxy page) is retried more slowly.
   */
  async #refused(es) {
    const answer = await this.#opts.probe();
    if (es !== this.#es || this.#closed || this.#paused) return;
    if (answer?.status === 401) { this.#signedOut(answer); return; }
    if (answer?.status === 200 && this.grant(answer.body?.subscribe)) { this.start(); return; }
    this.#retryLater(backoff(this.attempt, this.#opts.pace), `attempt ${this.attempt}`);
  }

  /**
   * The hub ends a stream when its credentials expire. One question to the hub tells whether they were renewed
   * meanwhile (a cookie set by another tab): then the stream reopens from our positions at once; otherwise the
   * client is signed out and asks onAuthExpired for new credentials.
   */
  async #authExpired(es) {
    if (es !== this.#es || this.#closed) return;
    es.close();
    this.attempt++;
    this.#authStreak++;
    this.#setState('backing-off', 'credentials expired');
    const answer = await this.#opts.probe();
    if (es !== this.#es || this.#closed || this.#paused) return;
    if (answer?.status === 401) { this.#signedOut(answer); return; }
    const now = answer?.status === 200 && this.#authStreak <= 1;
    this.#retryLater(now ? 0 : backoff(this.#authStreak, this.#opts.pace), 'credentials expired');
  }

  async #signedOut(answer) {
    if (this.#paused && this.state === 'signed-out') return; // one refusal heard several times (snapshots)
    const reason = answer?.body?.error || 'authentication required';
    this.pause('signed-out', reason);
    const gen = ++this.#gen;
    let next;
    try {
      next = await this.#hooks.onAuthExpired({ reason, status: answer?.status ?? 401, answer });
    } catch (err) {
      this.#warn(`onAuthExpired failed: ${err.message}`);
      return;
    }
    if (gen !== this.#gen || this.#closed || !next) return; // resumed meanwhile, closed, or waiting for resume()
    this.resume({ token: typeof next === 'string' ? next : next.token });
  }

  #retryLater(wait, why) {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#open(), wait);
    this.#setState('backing-off', `${why}; next in ${Math.round(wait / 1000)} s`);
  }

  /**
   * Loads a topic's snapshot, retrying with backoff until it works; the topic's events wait meanwhile. A refusal of
   * the credentials ends the retries: 401 signs the client out, 403 sets the topic aside.
   */
  #loadSnapshot(topic, reason, reset = null) {
    const pos = this.#pos.get(topic);
    pos.gate = pos.gate || [];
    pos.loading = pos.loading || this.#fetchSnapshot(topic, reason, reset).finally(() => { pos.loading = null; });
    return pos.loading;
  }

  async #fetchSnapshot(topic, reason, reset) {
    for (let attempt = 0; !this.#closed && !this.#paused; attempt++) {
      try {
        const snap = await this.getJSON(`/topics/${encodeURIComponent(topic)}/snapshot`);
        if (this.#paused || this.denied.has(topic)) return false;
        this.#applySnapshot(topic, snap, reason, reset);
        return true;
      } catch (err) {
        if (err.status === 401) { this.#signedOut({ status: 401, body: err.body }); return false; }
        if (err.status === 403) { this.#deny(topic, err.message); return false; }
        this.#warn(`Snapshot of ${topic} failed: ${err.message}; retrying`, topic);
        await this.#sleep(backoff(attempt, this.#opts.pace));
      }
    }
    return false;
  }

  #applySnapshot(topic, snapshot, reason, reset) {
    const pos = this.#pos.get(topic);
    const cursor = typeof snapshot?.cursor === 'string' && snapshot.cursor ? snapshot.cursor : '0-0';
    pos.lastId = cursor;
    this.#persist(topic, cursor);
    for (const map of [snapshot?.workflows, snapshot?.locks, snapshot?.health]) {
      for (const env of Object.values(map || {})) this.#seen(topic, env?.data);
    }
    this.stats.snapshots++;
    if (reset) this.#call('onReset', { ...reset, snapshot, cursor });
    else this.#call('onSnapshot', { topic, snapshot, cursor, reason });
    const held = pos.gate || [];
    Object.assign(pos, { gate: null, want: false });
    // Events that raced the snapshot request are either inside it (dropped) or after it (delivered, in order).
    for (const item of held) {
      if (cmpId(item.id, cursor) <= 0) this.stats.covered++;
      else this.#deliver(topic, item);
    }
  }

  #onMessage(es, ev) {
    // EventSource's own connection "error" is a plain Event; only a MessageEvent is an `event: error` frame.
    if (es !== this.#es || typeof ev.data !== 'string') return;
    // lastEventId repeats the previous id when an event carries none, so "unchanged" means ephemeral (or control).
    const fresh = ev.lastEventId !== this.#esLastId;
    if (fresh) this.#esLastId = ev.lastEventId;
    let data;
    try { data = JSON.parse(ev.data); } catch { data = ev.data; }
    if (ev.type === 'reset') { if (!fresh) this.#onReset(data); return; }
    const received = Date.now();
    if (!fresh) { this.#onEphemeral(ev.type, data, received); return; }
    this.#authStreak = 0;
    const where = parseEventId(ev.lastEventId, this.active());
    if (where && this.denied.has(where.topic)) return; // set aside: gone from the stream once it reopens
    if (!where || !this.#pos.has(where.topic)) {
      this.#warn(`Event with an unexpected id ${JSON.stringify(ev.lastEventId)} shown without a topic`);
      this.#call('onEvent', { topic: '', id: '', type: ev.type, data, ephemeral: false, received });
      return;
    }
    const item = { id: where.id, type: ev.type, data, received };
    const pos = this.#pos.get(where.topic);
    if (pos.gate) pos.gate.push(item);
    else this.#deliver(where.topic, item);
  }

  #deliver(topic, item) {
    const pos = this.#pos.get(topic);
    if (pos.lastId && cmpId(item.id, pos.lastId) <= 0) { this.stats.duplicateIds++; return; }
    pos.lastId = item.id;
    this.#persist(topic, item.id);
    if (this.#seen(topic, item.data)) { this.stats.duplicateKeys++; return; }
    this.stats.events++;
    this.#call('onEvent', { topic, ...item, ephemeral: false });
  }

  #onEphemeral(type, data, received) {
    const active = this.active();
    let topic = active[0];
    if (active.length > 1) topic = data && active.includes(data.topic) ? data.topic : '';
    if (this.#seen(topic, data)) { this.stats.duplicateKeys++; return; }
    this.stats.ephemeral++;
    this.#call('onEvent', { topic, id: '', type, data, ephemeral: true, received });
  }

  /**
   * Whether data repeats an idempotency key already seen for its topic and workflow: publishing is at-least-once,
   * and an agent that retries sends the same key again under a new stream id. The keys are bounded, oldest first out.
   */
  #seen(topic, data) {
    if (data === null || typeof data !== 'object' || data.idempotency_key == null) return false;
    const k = `${topic}\u0000${data.workflow ?? ''}\u0000${data.idempotency_key}`;
    if (this.#keys.has(k)) return true;
    this.#keys.add(k);
    if (this.#keys.size > this.#opts.dedupeLimit) this.#keys.delete(this.#keys.values().next().value);
    return false;
  }

  async #onReset(data) {
    const active = this.active();
    const topic = active.length === 1 ? active[0] : data?.topic;
    this.stats.resets++;
    if (!active.includes(topic)) { this.#warn(`Reset for unknown topic ${JSON.stringify(topic)}`); return; }
    const reset = { topic, reason: data?.reason || 'reset', oldest: data?.oldest || '' };
    if (!this.#opts.snapshots) {
      // The hub replays from its oldest event next; after history-lost those ids may be below our position.
      this.#pos.get(topic).lastId = '';
      this.#call('onReset', { ...reset, snapshot: null, cursor: '' });
      return;
    }
    this.#pos.get(topic).want = true;
    this.#setState('reset', `${topic}: ${reset.reason}`);
    if (!(await this.#loadSnapshot(topic, reset.reason, reset))) return;
    if (this.#es?.readyState === OPEN && ![...this.#pos.values()].some((p) => p.gate)) this.#setState('live');
  }

  #sleep(ms) {
    return new Promise((resolve) => {
      const wake = () => { clearTimeout(timer); this.#wakers.delete(wake); resolve(); };
      const timer = setTimeout(wake, ms);
      this.#wakers.add(wake);
    });
  }
}
