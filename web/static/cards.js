// Workflow cards. Elements are keyed by topic+workflow and updated in place; only cards whose workflow changed are
// touched, and the order is reconciled only when a status (or the filter) changed, so 500 cards at 100 events/s
// stay cheap.
import { compareWorkflows } from './store.js';
import { shownStatus } from './status.js';
import { setText } from './dom.js';
import { age, duration, percent } from './format.js';

const STATUS_TEXT = {
  failed: ['✕', 'Failed'], stalled: ['❚❚', 'Stalled'], running: ['▶', 'Running'], queued: ['◷', 'Queued'],
  succeeded: ['✓', 'Succeeded'], cancelled: ['⊘', 'Cancelled'], unknown: ['•', 'Unknown'],
};
const SUMMARY_ORDER = ['failed', 'stalled', 'running', 'queued', 'succeeded', 'cancelled'];

export class CardsView {
  constructor(store, { root, empty, summary, filter, multiTopic, onSelect, onStatus = () => {} }) {
    this.store = store;
    this.root = root;
    this.emptyEl = empty;
    this.summaryEl = summary;
    this.filterEl = filter;
    this.multiTopic = multiTopic;
    this.onSelect = onSelect;
    /** Told each card's shown status as it is painted, for the screen-reader summary. */
    this.onStatus = onStatus;
    /** @type {Map<string, {el:HTMLElement, parts:object}>} */
    this.els = new Map();
    this.text = '';
    this.status = '';
    this.filterDirty = true;
    this.order = [];
    this.lastSummary = '';
    /** The card an operator last moved to; null until one does. */
    this.chosen = null;
    /** True on the landing page, where the empty area lists topics instead. */
    this.idle = false;
    filter.addEventListener('input', () => { this.text = filter.value.trim().toLowerCase(); this.filterDirty = true; });
    summary.addEventListener('click', (e) => {
      const b = e.target.closest('button[data-filter]');
      if (!b) return;
      this.status = this.status === b.dataset.filter ? '' : b.dataset.filter;
      this.filterDirty = true;
      this.lastSummary = '';
    });
    root.addEventListener('keydown', (e) => this.onKey(e));
    root.addEventListener('click', (e) => {
      const card = e.target.closest('.card');
      if (card) { this.focusCard(card); this.onSelect(card.dataset.workflow); }
    });
  }

  render(now) {
    const s = this.store;
    for (const key of s.removedCards) {
      const entry = this.els.get(key);
      if (entry) { entry.el.remove(); this.els.delete(key); }
    }
    s.removedCards.clear();
    for (const key of s.dirtyCards) {
      const wf = s.workflows.get(key);
      if (wf) this.update(wf, now);
    }
    s.dirtyCards.clear();
    if (s.orderDirty || this.filterDirty) {
      this.reorder();
      s.orderDirty = false;
      this.filterDirty = false;
      this.renderSummary();
    }
  }

  /** Refreshes the clock-driven texts (elapsed, ETA, age); called once a second. */
  renderClocks(now) {
    for (const key of this.order) {
      const wf = this.store.workflows.get(key);
      const entry = this.els.get(key);
      if (wf && entry) this.updateClocks(wf, entry.parts, now);
    }
  }

  visible(wf) {
    if (this.status === 'attention') {
      const st = shownStatus(wf);
      if (st !== 'failed' && st !== 'stalled' && !wf.leaseAlarm) return false;
    } else if (this.status && shownStatus(wf) !== this.status) return false;
    if (!this.text) return true;
    return [wf.workflow, wf.title, wf.agent, wf.step, wf.topic, wf.message]
      .some((v) => v && v.toLowerCase().includes(this.text));
  }

  reorder() {
    const list = [...this.store.workflows.values()].filter((wf) => this.visible(wf)).sort(compareWorkflows);
    this.order = list.map((wf) => wf.key);
    const wanted = new Set(this.order);
    for (const [key, { el }] of this.els) if (!wanted.has(key) && el.parentNode) el.remove();
    // Walk the wanted order and move only elements that are out of place.
    let cursor = this.root.firstElementChild;
    for (const wf of list) {
      let entry = this.els.get(wf.key);
      if (!entry) entry = this.update(wf, Date.now());
      if (entry.el === cursor) { cursor = cursor.nextElementSibling; continue; }
      moveBefore(this.root, entry.el, cursor);
    }
    // Until someone picks a card, the tab stop follows the top card (the most urgent one).
    const first = this.root.firstElementChild;
    if ((!this.chosen || !this.chosen.isConnected) && first) this.setTabStop(first);
    if (this.idle) return;
    const total = this.store.workflows.size;
    this.emptyEl.hidden = list.length > 0;
    this.emptyEl.textContent = total === 0
      ? 'No workflows yet. Cards appear with the first progress event of a topic.'
      : 'No workflow matches the filter.';
  }

  renderSummary() {
    const c = this.store.summary();
    const sig = JSON.stringify(c) + this.status;
    if (sig === this.lastSummary) return;
    this.lastSummary = sig;
    const buttons = [['', `All ${c.total}`], ['attention', `Needs attention ${c.failed + c.stalled}`]];
    for (const st of SUMMARY_ORDER) if (c[st] || this.status === st) buttons.push([st, `${STATUS_TEXT[st][1]} ${c[st]}`]);
    // Buttons are kept and updated in place: rebuilding them would drop the keyboard focus of whoever is on one.
    const wanted = new Set(buttons.map(([f]) => f));
    for (const b of [...this.summaryEl.children]) if (!wanted.has(b.dataset.filter)) b.remove();
    let cursor = this.summaryEl.firstElementChild;
    for (const [f, label] of buttons) {
      let b = cursor && cursor.dataset.filter === f ? cursor : null;
      if (b) cursor = cursor.nextElementSibling;
      else {
        b = document.createElement('button');
        b.type = 'button';
        b.dataset.filter = f;
        if (f && f !== 'attention') b.dataset.status = f;
        this.summaryEl.insertBefore(b, cursor);
      }
      setText(b, label);
      b.setAttribute('aria-pressed', String(this.status === f));
    }
    this.summaryEl.dataset.failed = c.failed;
    this.summaryEl.dataset.stalled = c.stalled;
    this.summaryEl.dataset.total = c.total;
  }

  create(wf) {
    const el = document.createElement('li');
    el.className = 'card';
    el.tabIndex = -1;
    el.dataset.key = wf.key.replace('\u0000', '/');
    el.dataset.topic = wf.topic;
    el.dataset.workflow = wf.workflow;
    el.innerHTML = `
      <div class="card-head"><h3 class="card-title"></h3><span class="badge status"><span class="glyph" aria-hidden="true"></span><span class="status-text"></span></span></div>
      <div class="card-meta"><span class="wf-id"></span><span class="agent"></span><span class="topic"></span></div>
      <div class="card-step"><span class="step"></span><span class="pct"></span></div>
      <div class="bar" role="progressbar" aria-valuemin="0" aria-valuemax="100"><div class="bar-fill"></div></div>
      <p class="card-msg"></p>
      <div class="card-foot"><span class="elapsed"></span><span class="eta"></span><span class="updated"></span></div>
      <p class="lease-alarm" hidden></p>`;
    const q = (c) => el.querySelector(c);
    const parts = {
      title: q('.card-title'), badge: q('.status'), glyph: q('.glyph'), statusText: q('.status-text'),
      id: q('.wf-id'), agent: q('.agent'), topic: q('.topic'), step: q('.step'), pct: q('.pct'), bar: q('.bar'),
      fill: q('.bar-fill'), msg: q('.card-msg'), elapsed: q('.elapsed'), eta: q('.eta'), updated: q('.updated'),
      lease: q('.lease-alarm'),
    };
    const entry = { el, parts };
    this.els.set(wf.key, entry);
    return entry;
  }

  update(wf, now) {
    const entry = this.els.get(wf.key) || this.create(wf);
    const { el, parts: p } = entry;
    const st = shownStatus(wf);
    const [glyph, label] = STATUS_TEXT[st];
    this.onStatus(wf, st);
    setData(el, 'status', wf.status);
    setData(el, 'shown', st);
    setData(el, 'stalled', String(wf.stalled));
    setData(el, 'step', wf.step);
    setData(el, 'progress', Number.isFinite(wf.progress) ? String(wf.progress) : '');
    setData(el, 'percent', Number.isFinite(wf.progress) ? String(Math.round(wf.progress * 100)) : '');
    setData(el, 'progressInvalid', wf.progressInvalid);
    setData(el, 'leaseAlarm', wf.leaseAlarm);
    setText(p.title, wf.title || wf.workflow);
    setText(p.glyph, glyph);
    setText(p.statusText, stallText(wf) || label);
    setText(p.id, wf.title ? wf.workflow : '');
    setText(p.agent, wf.agent ? `agent ${wf.agent}` : '');
    setText(p.topic, this.multiTopic ? wf.topic : '');
    setText(p.step, wf.step || (st === 'queued' ? 'waiting' : '—'));
    setText(p.pct, wf.progressInvalid ? `invalid progress ${wf.progressInvalid}` : percent(wf.progress));
    p.pct.title = wf.progressInvalid ? 'progress must be a fraction from 0 to 1 (docs/schemas/progress.json)' : '';
    const pct = Number.isFinite(wf.progress) ? Math.round(wf.progress * 100) : 0;
    p.bar.setAttribute('aria-valuenow', String(pct));
    p.bar.setAttribute('aria-label', `${wf.title || wf.workflow} progress`);
    p.fill.style.transform = `scaleX(${Number.isFinite(wf.progress) ? wf.progress : 0})`;
    setText(p.msg, wf.message);
    p.msg.title = wf.message;
    p.lease.hidden = !wf.leaseAlarm;
    setText(p.lease, leaseText(wf));
    this.updateClocks(wf, p, now);
    return entry;
  }

  updateClocks(wf, p, now) {
    const end = Number.isFinite(wf.endedAt) ? wf.endedAt : now;
    let elapsed = '';
    if (wf.status === 'queued') elapsed = `queued ${duration(now - wf.firstAt)}`;
    else if (wf.startKnown) elapsed = `elapsed ${duration(end - wf.firstAt)}`;
    setText(p.elapsed, elapsed);
    setText(p.eta, Number.isFinite(wf.etaAt) ? `ETA ${duration(Math.max(0, wf.etaAt - now))}` : '');
    setText(p.updated, `updated ${age(now - wf.lastAt)}`);
  }

  onKey(e) {
    const card = e.target.closest('.card');
    if (!card) return;
    const cards = [...this.root.children];
    const i = cards.indexOf(card);
    const cols = Math.max(1, getComputedStyle(this.root).gridTemplateColumns.split(' ').length);
    const moves = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: cols, ArrowUp: -cols, Home: -i, End: cards.length };
    if (e.key in moves) {
      const next = cards[Math.max(0, Math.min(cards.length - 1, i + moves[e.key]))];
      if (next) { this.focusCard(next); next.focus(); }
      e.preventDefault();
    } else if (e.key === 'Enter' || e.key === ' ') {
      this.onSelect(card.dataset.workflow);
      e.preventDefault();
    }
  }

  /** Roving tabindex: the card grid is one tab stop, arrows move inside it. */
  focusCard(card) {
    this.chosen = card;
    this.setTabStop(card);
  }

  setTabStop(card) {
    for (const c of this.root.querySelectorAll('.card[tabindex="0"]')) if (c !== card) c.tabIndex = -1;
    card.tabIndex = 0;
  }

  focus() {
    const card = this.root.querySelector('.card[tabindex="0"]') || this.root.firstElementChild;
    if (card) { this.focusCard(card); card.focus(); }
  }
}

/** Moves el before ref keeping its focus: a card the operator is on may move when its status changes. */
function moveBefore(parent, el, ref) {
  if (el.isConnected && parent.moveBefore) { parent.moveBefore(el, ref); return; }
  const focused = document.activeElement === el;
  parent.insertBefore(el, ref);
  if (focused) el.focus({ preventScroll: true });
}

function setData(el, k, v) {
  if (el.dataset[k] !== v) el.dataset[k] = v;
}

/** The hub's verdict says "stalled"; the page's own timer only hints at it. */
function stallText(wf) {
  if (!wf.stalled || (wf.status !== 'running' && wf.status !== 'queued')) return '';
  return wf.stallHint ? `Stalled? · ${wf.status}, quiet` : `Stalled · hub verdict`;
}

function leaseText(wf) {
  if (wf.leaseAlarm === 'duplicate') return `⚠ Duplicate run (hub verdict)${wf.duplicate ? ` on ${wf.duplicate}` : ''}`;
  return wf.leaseAlarm ? `⚠ Lease ${wf.leaseAlarm === 'overlap' ? 'held twice' : wf.leaseAlarm}` : '';
}
