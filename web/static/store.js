// The console's model: workflows, locks and the event log. Nothing here touches the DOM; the renderer reads
// the dirty marks once per animation frame, so a burst of events costs one layout, not one per event.
import { cmpId } from './client/hubclient.js';
import { progressValue, summarize } from './format.js';
import { Locks } from './locks.js';
import { Timeline } from './timeline.js';

import { TERMINAL, shownStatus } from './status.js';

// Lower ranks sort first: what needs a human comes before what merely moves.
const RANK = { failed: 0, stalled: 1, running: 2, queued: 3, unknown: 3, cancelled: 4, succeeded: 5 };

export function workflowKey(topic, workflow) {
  return `${topic}\u0000${workflow}`;
}

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

export function compareWorkflows(a, b) {
  const ra = RANK[shownStatus(a)], rb = RANK[shownStatus(b)];
  if (ra !== rb) return ra - rb;
  // The newest failure is the one an operator is looking for; everything else keeps a stable, scannable order.
  if (ra === 0 && a.changedAt !== b.changedAt) return b.changedAt - a.changedAt;
  return collator.compare(a.topic, b.topic) || collator.compare(a.label, b.label);
}

export class Store {
  constructor({ stallAfterMs = 60000, logLimit = 1000 } = {}) {
    this.stallAfterMs = stallAfterMs;
    this.logLimit = logLimit;
    /** @type {Map<string, object>} */
    this.workflows = new Map();
    this.locks = new Locks(this);
    this.timeline = new Timeline();
    this.log = [];
    this.logSeq = 0;
    this.dirtyCards = new Set();
    this.removedCards = new Set();
    this.orderDirty = true;
    this.newLog = [];
    this.logReset = false;
  }

  /**
   * Applies one event. The hub's client has already dropped repeats (by id, and by idempotency key: an agent's
   * retry), so every event that reaches the store is new.
   * @param {string} topic
   * @param {{id?:string, type:string, data:any}} env
   * @param {{time:number, source:'live'|'replay'|'snapshot'|'ephemeral'}} meta time is on the browser's clock
   */
  apply(topic, env, meta) {
    const data = env.data;
    const obj = data !== null && typeof data === 'object' && !Array.isArray(data) ? data : null;
    const workflow = obj && (typeof obj.workflow === 'string' || typeof obj.workflow === 'number')
      ? String(obj.workflow) : '';
    if (meta.source !== 'snapshot') {
      this.addLog({
        id: env.id || '', topic, type: env.type, workflow, time: meta.time, source: meta.source,
        text: summarize(env.type, data), level: levelOf(env.type, obj),
      });
    }
    if (env.type === 'progress' && workflow) this.applyProgress(topic, workflow, obj, env.id, meta.time, meta.source);
    else if (env.type === 'lock' && obj) {
      this.locks.apply(topic, obj, env.id, meta.time);
      this.timeline.lock(topic, obj, meta.time);
    } else if (env.type === 'health' && workflow) this.applyHealth(topic, workflow, obj, env.id, meta.time);
    else if (workflow) this.touch(topic, workflow, meta.time);
  }

  applyProgress(topic, workflow, d, id, time, source) {
    const key = workflowKey(topic, workflow);
    let wf = this.workflows.get(key);
    if (!wf) {
      wf = {
        key, topic, workflow, label: workflow, title: '', step: '', progress: NaN, status: 'running',
        progressInvalid: '', message: '', agent: '', etaAt: NaN, firstAt: time, lastAt: time, endedAt: NaN, changedAt: time,
        lastId: '', stalled: false, stallHint: false, verdict: '', verdictId: '', duplicate: '', events: 0, leaseAlarm: '',
        // A snapshot holds a workflow's latest event only, so its start (and elapsed time) is unknown.
        startKnown: source !== 'snapshot',
      };
      this.workflows.set(key, wf);
      this.orderDirty = true;
    } else if (id && wf.lastId && cmpId(id, wf.lastId) <= 0) {
      return; // Older than what the card shows already (a snapshot overtook it); the log still has it.
    }
    const before = shownStatus(wf);
    if (d.title != null) { wf.title = String(d.title); wf.label = wf.title || workflow; }
    if (d.step != null) wf.step = String(d.step);
    if (d.progress != null) ({ value: wf.progress, invalid: wf.progressInvalid } = progressValue(d.progress));
    if (d.message != null) wf.message = String(d.message);
    if (d.agent != null) wf.agent = String(d.agent);
    if (d.eta_s != null) wf.etaAt = Number.isFinite(Number(d.eta_s)) ? time + Number(d.eta_s) * 1000 : NaN;
    const started = Date.parse(d.started_at);
    if (Number.isFinite(started)) { wf.firstAt = started; wf.startKnown = true; }
    if (d.status != null) {
      const status = String(d.status);
      if (TERMINAL.has(status) && !TERMINAL.has(wf.status)) wf.endedAt = time;
      if (!TERMINAL.has(status)) wf.endedAt = NaN;
      // Time spent queued is not work: elapsed starts when the workflow leaves the queue.
      if (wf.status === 'queued' && status !== 'queued' && !Number.isFinite(started)) wf.firstAt = time;
      wf.status = status;
    }
    if (TERMINAL.has(wf.status)) wf.etaAt = NaN;
    wf.lastAt = Math.max(wf.lastAt, time);
    if (id) wf.lastId = id;
    // A newer event ends a stall at once; the hub's "recovered" follows.
    if (wf.verdict === 'stalled' && id && cmpId(id, wf.verdictId) > 0) wf.verdict = '';
    wf.events++;
    wf.stalled = this.isStalled(wf, Date.now());
    wf.stallHint = wf.stalled && wf.verdict !== 'stalled';
    if (shownStatus(wf) !== before) { wf.changedAt = time; this.orderDirty = true; }
    this.dirtyCards.add(key);
  }

  /** A workflow known from a snapshot began at time (its first event's): elapsed time and its timeline bar start there. */
  started(topic, workflow, time) {
    const key = workflowKey(topic, workflow);
    const wf = this.workflows.get(key);
    if (!wf || wf.startKnown || wf.status === 'queued') return;
    wf.firstAt = Math.min(time, wf.firstAt);
    wf.startKnown = true;
    this.dirtyCards.add(key);
    this.timeline.dirty = true;
  }

  /** Any event naming a known workflow proves it is alive, even when it is not a progress event. */
  touch(topic, workflow, time) {
    const wf = this.workflows.get(workflowKey(topic, workflow));
    if (!wf || time <= wf.lastAt) return;
    wf.lastAt = time;
    this.refreshStall(wf, Date.now());
  }

  /**
   * The hub's health events: its verdicts on a workflow, shared by every console. A duplicate run is also an alarm
   * and a mark on the timeline.
   */
  applyHealth(topic, workflow, d, id, time) {
    const wf = this.workflows.get(workflowKey(topic, workflow));
    if (d.verdict === 'duplicate') {
      this.locks.verdict(topic, d, id, time, wf);
      this.timeline.duplicate(d, time);
    }
    if (!wf || (id && wf.verdictId && cmpId(id, wf.verdictId) <= 0)) return;
    if (d.verdict === 'stalled' && id && wf.lastId && cmpId(id, wf.lastId) < 0) return; // the workflow moved on
    if (id) wf.verdictId = id;
    if (d.verdict === 'stalled') wf.verdict = 'stalled';
    else if (d.verdict === 'recovered') wf.verdict = '';
    else if (d.verdict === 'duplicate') wf.duplicate = String(d.key ?? '');
    this.refreshStall(wf, Date.now(), true);
  }

  /** The hub's verdict wins; without one, the page's timer gives a hint. */
  isStalled(wf, now) {
    if (wf.verdict === 'stalled') return true;
    return wf.status === 'running' && now - wf.lastAt > this.stallAfterMs;
  }

  refreshStall(wf, now, changed = false) {
    const stalled = this.isStalled(wf, now);
    wf.stallHint = stalled && wf.verdict !== 'stalled';
    if (stalled === wf.stalled && !changed) return;
    wf.stalled = stalled;
    wf.changedAt = now;
    this.orderDirty = true;
    this.dirtyCards.add(wf.key);
  }

  /** Re-evaluates time-based state; called about once a second. */
  tick(now) {
    for (const wf of this.workflows.values()) this.refreshStall(wf, now);
    this.locks.tick(now);
  }

  setStallAfter(ms) {
    this.stallAfterMs = ms;
    this.tick(Date.now());
  }

  /** Forgets a topic's workflows and locks before its snapshot is applied again. */
  clearTopic(topic) {
    for (const [key, wf] of this.workflows) {
      if (wf.topic !== topic) continue;
      this.workflows.delete(key);
      this.dirtyCards.delete(key);
      this.removedCards.add(key);
      this.orderDirty = true;
    }
    this.locks.clearTopic(topic);
    this.timeline.clearTopic(topic);
  }

  addLog(entry) {
    entry.n = ++this.logSeq;
    this.log.push(entry);
    this.newLog.push(entry);
    // Trimming in chunks keeps the array shift off the per-event path at 100 events/s.
    if (this.log.length > this.logLimit * 1.25) this.log.splice(0, this.log.length - this.logLimit);
    if (this.newLog.length > this.logLimit) this.newLog.splice(0, this.newLog.length - this.logLimit);
  }

  /** A line of the console's own (connection changes, resets); it has no event id. */
  note(text, level = 'info', topic = '') {
    this.addLog({ id: '', topic, type: 'console', workflow: '', time: Date.now(), source: 'console', text, level });
  }

  logTail() {
    return this.log.length > this.logLimit ? this.log.slice(-this.logLimit) : this.log;
  }

  /** Counts per shown status, for the summary bar. */
  summary() {
    const c = { total: 0, failed: 0, stalled: 0, running: 0, queued: 0, succeeded: 0, cancelled: 0, unknown: 0 };
    for (const wf of this.workflows.values()) { c.total++; c[shownStatus(wf)]++; }
    return c;
  }

  /** A running workflow matching a lock, by the lock's workflow field or by its holder being the agent. */
  findWorkflow(topic, workflow, holder) {
    if (workflow) {
      const wf = this.workflows.get(workflowKey(topic, workflow));
      if (wf) return wf;
      for (const w of this.workflows.values()) if (w.workflow === workflow) return w;
      return null;
    }
    if (!holder) return null;
    for (const w of this.workflows.values()) {
      if (w.topic === topic && w.agent === holder && w.status === 'running') return w;
    }
    return null;
  }
}

function levelOf(type, d) {
  if (type === 'progress') {
    if (d?.status === 'failed') return 'error';
    if (d?.status === 'cancelled') return 'warn';
    return 'info';
  }
  if (type === 'lock') return d?.state === 'lost' || d?.state === 'expired' ? 'error' : 'info';
  if (type === 'error' || d?.level === 'error') return 'error';
  if (type === 'warn' || type === 'warning' || d?.level === 'warn' || d?.level === 'warning') return 'warn';
  return 'info';
}
