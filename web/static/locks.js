// Leases as the console sees them through `lock` events, and the alarms an operator must not miss: a lease lost or
// expired under a running workflow (its work may now run twice), and two holders of one key at the same time.

import { HELD } from './status.js';

const MAX_LOCKS = 500;
const MAX_ALARMS = 50;

export class Locks {
  constructor(store) {
    this.store = store;
    /** @type {Map<string, object>} by lock key: a lease is global, whichever topic announced it */
    this.byKey = new Map();
    /** @type {Map<string, object>} */
    this.alarms = new Map();
    this.dirty = true;
    this.alarmsDirty = true;
  }

  apply(topic, d, id, time) {
    if (d.key == null) return;
    const key = String(d.key);
    const prev = this.byKey.get(key);
    const state = String(d.state ?? '');
    const holder = d.holder != null ? String(d.holder) : '';
    const ttl = Number(d.ttl_ms);
    const lock = {
      key, topic, holder, state, id: id || '',
      fence: d.fence ?? '',
      ttlMs: Number.isFinite(ttl) ? ttl : NaN,
      expiresAt: HELD.has(state) && Number.isFinite(ttl) ? time + ttl : NaN,
      workflow: d.workflow != null ? String(d.workflow) : (prev && prev.holder === holder ? prev.workflow : ''),
      since: prev && prev.holder === holder && HELD.has(prev.state) ? prev.since : time,
      updatedAt: time,
      alarm: '',
    };
    if (HELD.has(state) && prev && HELD.has(prev.state) && prev.holder !== holder && prev.expiresAt > time) {
      this.raise('overlap', lock, time,
        `Two holders of ${key}: ${prev.holder || '?'} (fence ${prev.fence}) still held it when ` +
        `${holder || '?'} (fence ${lock.fence}) got it`);
    }
    if (state === 'acquired' && prev && prev.holder !== holder && isNum(prev.fence) && isNum(lock.fence) &&
        Number(lock.fence) <= Number(prev.fence)) {
      this.raise('fence', lock, time,
        `Fencing token of ${key} went backwards: ${prev.fence} → ${lock.fence}`);
    }
    if (state === 'lost' || state === 'expired') {
      const wf = this.store.findWorkflow(topic, lock.workflow, holder);
      if (wf && wf.status === 'running') {
        this.raise(state, lock, time,
          `Lease ${key} ${state} while ${wf.label} is still running (holder ${holder || '?'}, fence ${lock.fence})`, wf);
      }
    }
    this.byKey.delete(key); // re-insert so the map keeps the most recently active lock last
    this.byKey.set(key, lock);
    if (this.byKey.size > MAX_LOCKS) this.evict();
    this.dirty = true;
  }

  /** The hub's duplicate verdict: an alarm every console shows the same way, whatever it saw itself. */
  verdict(topic, d, id, time, wf) {
    const key = String(d.key ?? '');
    const lock = this.byKey.get(key) || { key, topic, holder: '', fence: '', alarm: '' };
    this.raise('duplicate', { ...lock, fence: id || lock.fence }, time,
      `Hub verdict: duplicate run${key ? ` on ${key}` : ''}${d.detail ? ` (${d.detail})` : ''}`, wf);
    const held = this.byKey.get(key);
    if (held) { held.alarm = 'duplicate'; this.dirty = true; }
  }

  raise(kind, lock, time, text, wf) {
    const id = `${kind}\u0000${lock.key}\u0000${lock.fence}\u0000${lock.holder}`;
    lock.alarm = kind;
    if (this.alarms.has(id)) return;
    const alarm = { id, kind, key: lock.key, topic: lock.topic, holder: lock.holder, fence: lock.fence,
      workflow: wf ? wf.workflow : lock.workflow, wfKey: wf ? wf.key : '', text, at: time, acked: false };
    this.alarms.set(id, alarm);
    if (wf) {
      if (kind === 'duplicate' || wf.leaseAlarm !== 'duplicate') wf.leaseAlarm = kind; // the hub's verdict outranks the page's own
      this.store.dirtyCards.add(wf.key);
    }
    if (this.alarms.size > MAX_ALARMS) {
      const old = [...this.alarms.values()].find((a) => a.acked) || this.alarms.values().next().value;
      this.alarms.delete(old.id);
    }
    this.alarmsDirty = true;
  }

  acknowledge(id) {
    const a = this.alarms.get(id);
    if (!a || a.acked) return;
    a.acked = true;
    const wf = a.wfKey && this.store.workflows.get(a.wfKey);
    if (wf && ![...this.alarms.values()].some((x) => !x.acked && x.wfKey === wf.key)) {
      wf.leaseAlarm = '';
      this.store.dirtyCards.add(wf.key);
    }
    const lock = this.byKey.get(a.key);
    if (lock && lock.alarm === a.kind) { lock.alarm = ''; this.dirty = true; }
    this.alarmsDirty = true;
  }

  active() {
    return [...this.alarms.values()].filter((a) => !a.acked);
  }

  evict() {
    // Released and lost leases go first; a held lease is never forgotten while the map has others to drop.
    for (const [k, l] of this.byKey) {
      if (!HELD.has(l.state)) { this.byKey.delete(k); return; }
    }
    this.byKey.delete(this.byKey.keys().next().value);
  }

  clearTopic(topic) {
    for (const [k, l] of this.byKey) if (l.topic === topic) this.byKey.delete(k);
    this.dirty = true;
  }

  /** Countdowns change every tick; a held lease past its expiry without a renewal is shown as overdue. */
  tick(now) {
    for (const l of this.byKey.values()) {
      if (HELD.has(l.state)) { this.dirty = true; break; }
    }
  }

  /** Rows for the panel: alarms first, then held leases by soonest expiry, then the rest by recency. */
  rows(now) {
    const rank = (l) => (l.alarm ? 0 : HELD.has(l.state) ? 1 : l.state === 'lost' || l.state === 'expired' ? 2 : 3);
    return [...this.byKey.values()].sort((a, b) => rank(a) - rank(b) ||
      (rank(a) === 1 ? a.expiresAt - b.expiresAt : b.updatedAt - a.updatedAt) || (a.key < b.key ? -1 : 1))
      .map((l) => ({ ...l, remaining: l.expiresAt - now, overdue: HELD.has(l.state) && l.expiresAt < now }));
  }
}

function isNum(v) {
  return v !== '' && v != null && Number.isFinite(Number(v));
}
