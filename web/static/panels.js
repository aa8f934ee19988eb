// The smaller panels: locks, alarms and the connection indicator with its counters.
import { setText, textEl } from './dom.js';
import { age, clock, count, duration } from './format.js';

const LOCK_STATE_TEXT = {
  acquired: '● Held', renewed: '● Held', released: '○ Released', lost: '✕ Lost', expired: '✕ Expired',
};

export class LocksView {
  constructor(locks, { body, empty, count: countEl }) {
    this.locks = locks;
    this.body = body;
    this.empty = empty;
    this.countEl = countEl;
  }

  render(now) {
    if (!this.locks.dirty) return;
    this.locks.dirty = false;
    const rows = this.locks.rows(now).slice(0, 200);
    this.empty.hidden = rows.length > 0;
    const held = rows.filter((r) => r.state === 'acquired' || r.state === 'renewed').length;
    this.countEl.textContent = rows.length ? `${held} held · ${rows.length} known` : '';
    // Rows are few (tens); rebuilding keeps the countdown and the sort trivially consistent.
    this.body.replaceChildren(...rows.map((l) => lockRow(l)));
  }
}

function lockRow(l) {
  const tr = document.createElement('tr');
  tr.dataset.key = l.key;
  tr.dataset.state = l.state;
  tr.dataset.holder = l.holder;
  tr.dataset.fence = String(l.fence);
  if (l.overdue) tr.dataset.overdue = 'true';
  if (l.alarm) tr.dataset.alarm = l.alarm;
  const key = textEl('th', l.key);
  key.scope = 'row';
  if (l.workflow) key.append(textEl('small', l.workflow));
  let expires = '—';
  if (l.state === 'acquired' || l.state === 'renewed') {
    expires = l.overdue ? `overdue ${duration(-l.remaining)}` : duration(l.remaining);
    if (l.overdue) expires = `⚠ ${expires}`;
  } else if (l.updatedAt) {
    expires = age(Date.now() - l.updatedAt);
  }
  const stateCell = textEl('td', LOCK_STATE_TEXT[l.state] || l.state || '?');
  stateCell.className = 'lock-state';
  if (l.alarm) {
    const a = document.createElement('strong');
    a.className = 'alarm-tag';
    a.dataset.alarm = l.alarm;
    a.textContent = l.alarm === 'overlap' ? 'ALARM · two holders' : l.alarm === 'fence' ? 'ALARM · fence'
      : l.alarm === 'duplicate' ? 'ALARM · duplicate run' : 'ALARM';
    stateCell.append(a);
  }
  const exp = textEl('td', expires);
  exp.className = 'num';
  exp.title = expires;
  stateCell.title = l.state;
  const fence = textEl('td', String(l.fence));
  fence.className = 'num';
  tr.append(key, textEl('td', l.holder || '—'), fence, stateCell, exp);
  return tr;
}

export class AlarmsView {
  /** afterFocus takes the keyboard focus when the alarm the operator was on goes and no other is left. */
  constructor(locks, root, { afterFocus = null } = {}) {
    this.locks = locks;
    this.root = root;
    this.afterFocus = afterFocus;
    root.addEventListener('click', (e) => {
      const b = e.target.closest('button[data-ack]');
      if (b) this.locks.acknowledge(b.dataset.ack);
    });
  }

  render() {
    if (!this.locks.alarmsDirty) return;
    this.locks.alarmsDirty = false;
    const active = this.locks.active().sort((a, b) => b.at - a.at);
    const focused = this.root.contains(document.activeElement) ? document.activeElement.dataset.ack ?? '' : null;
    this.root.hidden = active.length === 0;
    this.root.dataset.count = String(active.length);
    this.root.replaceChildren(...active.slice(0, 6).map((a) => {
      const div = document.createElement('div');
      div.className = 'alarm';
      div.dataset.alarm = a.kind;
      div.dataset.key = a.key;
      if (a.workflow) div.dataset.workflow = a.workflow;
      const title = document.createElement('strong');
      title.textContent = a.kind === 'duplicate' ? 'Duplicate run (hub verdict)' : a.kind === 'overlap' ? 'Two lease holders' : a.kind === 'fence' ? 'Fence went backwards'
        : `Lease ${a.kind}`;
      const text = document.createElement('span');
      text.textContent = `${a.text} · ${clock(a.at)}`;
      const ack = document.createElement('button');
      ack.type = 'button';
      ack.dataset.ack = a.id;
      ack.textContent = 'Acknowledge';
      div.append('⚠ ', title, text, ack);
      return div;
    }));
    if (active.length > 6) {
      const more = document.createElement('p');
      more.textContent = `and ${active.length - 6} more`;
      this.root.append(more);
    }
    if (focused !== null) this.refocus(focused);
  }

  /** The rebuild above drops the focus; it goes back to the same alarm, else the newest one, else afterFocus. */
  refocus(ack) {
    const buttons = [...this.root.querySelectorAll('button[data-ack]')];
    const next = buttons.find((b) => b.dataset.ack === ack) || buttons[0] || this.afterFocus;
    if (next) next.focus();
  }

  /** Keyboard "A": acknowledges the newest alarm. */
  acknowledgeNewest() {
    const a = this.locks.active().sort((x, y) => y.at - x.at)[0];
    if (a) this.locks.acknowledge(a.id);
  }
}

const STATE_TEXT = {
  connecting: 'Connecting', live: 'Live', reconnecting: 'Reconnecting', replaying: 'Replaying', reset: 'Reset',
  idle: 'No topic', 'signed-out': 'Signed out', forbidden: 'Not allowed',
};

export class StatusView {
  constructor(feed, { conn, label, detail, counters, heartbeat, latency, lastReset }) {
    this.feed = feed;
    this.conn = conn;
    this.label = label;
    this.detail = detail;
    this.counters = counters;
    this.heartbeat = heartbeat;
    this.latency = latency;
    this.lastResetEl = lastReset;
  }

  render(now) {
    const f = this.feed;
    if (this.conn.dataset.state !== f.state) this.conn.dataset.state = f.state;
    this.conn.dataset.attempt = String(f.attempt);
    setText(this.label, STATE_TEXT[f.state] || f.state);
    let detail = '';
    if (f.state === 'reconnecting') detail = f.detail || `attempt ${f.attempt}`;
    else if (f.state === 'replaying') detail = `${count(f.replayRun)} missed events`;
    else if (f.state === 'reset') detail = `reloading snapshot · ${f.detail}`;
    else if (f.state === 'connecting') detail = 'loading snapshot';
    else if (f.state === 'signed-out') detail = 'sign in to resume';
    else if (f.state === 'forbidden') detail = f.detail;
    setText(this.detail, detail);
    for (const el of this.counters) {
      const k = el.dataset.counter;
      if (k in f.counts) setText(el, count(f.counts[k]));
    }
    const quiet = now - f.lastMessageAt;
    setText(this.heartbeat, Number.isFinite(quiet) ? age(quiet) : '—');
    // Heartbeats arrive every 15 s of silence; twice that without anything means the stream is stuck.
    this.heartbeat.dataset.stale = String(f.state === 'live' && quiet > 35000);
    const lat = f.latency();
    setText(this.latency, Number.isFinite(lat) ? `${Math.max(0, Math.round(lat))} ms` : '—');
    const r = f.lastReset;
    if (r) {
      this.lastResetEl.hidden = false;
      this.lastResetEl.dataset.topic = r.topic;
      this.lastResetEl.dataset.reason = r.reason;
      setText(this.lastResetEl, `Snapshot of ${r.topic} reloaded at ${clock(r.at)} after ${r.reason}` +
        ` (oldest stored ${r.oldest || '?'}, resumed at ${r.cursor}).`);
    }
  }
}

