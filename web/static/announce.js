// What a screen reader is told without being asked: a polite summary of the status changes that need a human (a
// workflow failed, stalled or resumed; the connection lost or back), never every event. Changes are gathered and
// spoken at most once per gap, so a burst of failures is one sentence, not a queue the operator must sit through.

const WORKFLOW_WORDS = { failed: 'Failed', stalled: 'Stalled', resumed: 'Resumed' };
const CONNECTION_TEXT = {
  reconnecting: 'Connection lost, reconnecting.', reset: 'History was trimmed; reloading the snapshot.',
  live: 'Connection is live again.',
};
const MAX_KNOWN = 5000;
const MAX_NAMES = 3;

export class Announcer {
  /** @param {HTMLElement} region a role="status" element (aria-live polite) */
  constructor(region, { gapMs = 1500 } = {}) {
    this.region = region;
    this.gapMs = gapMs;
    /** Last shown status by workflow key: a snapshot reload re-paints cards without their status having changed. */
    this.known = new Map();
    this.pending = { failed: [], stalled: [], resumed: [] };
    this.connection = '';
    /** Sentences of the console's own, such as the prompt before a session ends; said at the next flush. */
    this.notes = [];
    this.spokenConnection = '';
    this.wasLive = false;
    /** Nothing is spoken for what the first paint shows; the board itself says it. */
    this.armed = false;
    this.lastAt = -Infinity;
    this.spoken = 0;
  }

  /** Called with each painted card's shown status; remembers it and queues the changes worth saying. */
  workflow(key, label, status) {
    const prev = this.known.get(key);
    if (prev === status) return;
    this.known.delete(key);
    this.known.set(key, status);
    if (this.known.size > MAX_KNOWN) this.known.delete(this.known.keys().next().value);
    if (!this.armed) return;
    if (status === 'failed' || status === 'stalled') this.pending[status].push(label);
    else if (prev === 'stalled' && status === 'running') this.pending.resumed.push(label);
  }

  /** Called with the feed's state on each render; only a loss of the live stream and its return are said. */
  feed(state) {
    if (state === 'live') {
      if (this.wasLive && this.connection && this.connection !== 'live') this.connection = 'live';
      this.wasLive = true;
      this.armed = true;
    } else if (this.wasLive && CONNECTION_TEXT[state]) {
      this.connection = state;
    }
  }

  /** Queues a sentence that needs no card or connection change behind it. */
  say(text) {
    if (text) this.notes.push(text);
  }

  /** Speaks what has gathered, if the last announcement is at least gapMs old. */
  flush(now) {
    const parts = [];
    for (const [kind, word] of Object.entries(WORKFLOW_WORDS)) {
      const names = [...new Set(this.pending[kind])];
      if (!names.length) continue;
      parts.push(names.length <= MAX_NAMES ? `${word}: ${names.join(', ')}.`
        : `${names.length} workflows ${word.toLowerCase()}.`);
    }
    if (this.connection && this.connection !== this.spokenConnection) parts.unshift(CONNECTION_TEXT[this.connection]);
    parts.unshift(...this.notes);
    if (!parts.length || now - this.lastAt < this.gapMs) return;
    this.pending = { failed: [], stalled: [], resumed: [] };
    this.notes = [];
    this.spokenConnection = this.connection;
    this.lastAt = now;
    this.spoken++;
    this.region.dataset.count = String(this.spoken);
    this.region.textContent = parts.join(' ');
  }
}
