// The timeline: one lane per workflow (a bar from its first to its latest event, coloured and labelled by status)
// and one per lock key (each holder's held interval, with its fence), over a chosen window. Two holders of one key
// at once and the hub's duplicate verdicts are drawn in the alarm colour, so an incident reads at a glance.
import { HELD, shownStatus } from './status.js';

const MAX_HOLDS = 200; // per key; the oldest intervals go first
const MAX_KEYS = 100;
const SVG = 'http://www.w3.org/2000/svg';

/** Lock intervals and duplicate marks, fed by the store. Nothing here touches the DOM. */
export class Timeline {
  constructor() {
    /** @type {Map<string, {key:string, topic:string, holds:object[]}>} */
    this.keys = new Map();
    this.marks = [];
    this.dirty = true;
  }

  lock(topic, d, time) {
    if (d.key == null) return;
    const key = String(d.key);
    let lane = this.keys.get(key);
    if (!lane) {
      lane = { key, topic, holds: [] };
      this.keys.set(key, lane);
      if (this.keys.size > MAX_KEYS) this.keys.delete(this.keys.keys().next().value);
    }
    const holder = String(d.holder ?? '');
    const open = lane.holds.find((h) => h.open && h.holder === holder);
    if (HELD.has(String(d.state))) {
      if (open) { open.to = time; open.fence = d.fence ?? open.fence; } else {
        lane.holds.push({ holder, fence: d.fence ?? '', workflow: String(d.workflow ?? ''), from: time, to: time, open: true });
        if (lane.holds.length > MAX_HOLDS) lane.holds.shift();
      }
    } else if (open) {
      open.to = time;
      open.open = false;
      open.end = String(d.state ?? '');
    }
    this.dirty = true;
  }

  duplicate(d, time) {
    this.marks.push({ key: String(d.key ?? ''), workflow: String(d.workflow ?? ''), at: time, detail: String(d.detail ?? '') });
    if (this.marks.length > 100) this.marks.shift();
    this.dirty = true;
  }

  clearTopic(topic) {
    for (const [k, lane] of this.keys) if (lane.topic === topic) this.keys.delete(k);
    this.dirty = true;
  }

  /** Intervals of lane in which two holders held the key at once. */
  static overlaps(lane, now) {
    const out = [];
    const hs = lane.holds.map((h) => ({ ...h, to: h.open ? now : h.to })).sort((a, b) => a.from - b.from);
    for (let i = 0; i < hs.length; i++) {
      for (let j = i + 1; j < hs.length && hs[j].from < hs[i].to; j++) {
        if (hs[j].holder !== hs[i].holder) out.push({ from: hs[j].from, to: Math.min(hs[i].to, hs[j].to), a: hs[i], b: hs[j] });
      }
    }
    return out;
  }
}

/** Draws the timeline as SVG, with a text summary of what needs a human for those who do not see it. */
export class TimelineView {
  constructor(root, store) {
    this.store = store;
    this.root = root;
    this.svg = root.querySelector('#timeline-svg');
    this.summary = root.querySelector('#timeline-summary');
    this.windowSel = root.querySelector('#timeline-window');
    this.windowMs = Number(this.windowSel?.value || 0); // 0: fit what the console has seen
    this.windowSel?.addEventListener('change', () => { this.windowMs = Number(this.windowSel.value); this.render(Date.now(), true); });
    this.last = 0;
  }

  /** The span from the earliest start the console knows (at least 5 s, at most an hour) to now. */
  fit(now) {
    let first = now;
    for (const w of this.store.workflows.values()) if (w.startKnown) first = Math.min(first, w.firstAt);
    for (const l of this.store.timeline.keys.values()) for (const h of l.holds) first = Math.min(first, h.from);
    return Math.min(3600000, Math.max(5000, (now - first) * 1.1));
  }

  render(now, force = false) {
    if (!this.svg || !this.root.open) return;
    if (!force && now - this.last < 1000 && !this.store.timeline.dirty) return;
    this.last = now;
    this.store.timeline.dirty = false;
    const span = this.windowMs || this.fit(now);
    const from = now - span;
    const wfs = [...this.store.workflows.values()].filter((w) => (Number.isFinite(w.endedAt) ? w.endedAt : w.lastAt) >= from)
      .sort((a, b) => a.firstAt - b.firstAt).slice(-40);
    const locks = [...this.store.timeline.keys.values()].filter((l) => l.holds.some((h) => (h.open ? now : h.to) >= from));
    const labelW = 250, width = Math.max(this.svg.clientWidth || this.root.clientWidth || 600, 320), row = 20;
    const height = (wfs.length + locks.length + 1) * row + 24;
    const x = (t) => labelW + ((Math.max(t, from) - from) / span) * (width - labelW - 8);
    this.svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    this.svg.setAttribute('height', String(height));
    this.svg.replaceChildren();
    let y = 4;
    const text = (tx, ty, s, cls) => this.svg.append(el('text', { x: tx, y: ty, class: cls }, s));
    text(labelW, y + 10, `${minutes(span)} ago`, 'tl-axis');
    text(width - 8, y + 10, 'now', 'tl-axis tl-end');
    y += row;
    const problems = [];
    for (const wf of wfs) {
      const st = shownStatus(wf);
      const end = Number.isFinite(wf.endedAt) ? wf.endedAt : (st === 'running' || st === 'queued' || st === 'stalled' ? now : wf.lastAt);
      text(4, y + 13, `${clip(wf.label)} · ${st}`, 'tl-label');
      // A workflow known from a snapshot only started before the page saw it: its bar runs from the window's start,
      // open on the left, rather than shrinking to a tick at its latest event.
      const start = wf.startKnown ? wf.firstAt : from;
      const bar = el('rect', { x: x(start), y: y + 3, width: Math.max(3, x(end) - x(start)), height: row - 6,
        class: `tl-bar tl-${st}${wf.startKnown ? '' : ' tl-start-unknown'}` });
      bar.append(el('title', {}, `${wf.label}: ${st}${wf.startKnown ? '' : ', started before this page connected'}`));
      this.svg.append(bar);
      if (st === 'failed' || st === 'stalled') problems.push(`${wf.label} ${st}`);
      y += row;
    }
    for (const lane of locks) {
      text(4, y + 13, `lock ${clip(lane.key)}`, 'tl-label');
      lane.holds.forEach((h, i) => {
        const to = h.open ? now : h.to;
        if (to < from) return;
        const r = el('rect', { x: x(h.from), y: y + 3, width: Math.max(3, x(to) - x(h.from)), height: row - 6,
          class: `tl-hold tl-holder-${i % 4}` });
        r.append(el('title', {}, `${lane.key} held by ${h.holder || '?'} (fence ${h.fence})${h.end ? `, ${h.end}` : ''}`));
        this.svg.append(r);
        text(x(h.from) + 3, y + 13, `${h.holder} #${h.fence}`, 'tl-hold-label');
      });
      for (const o of Timeline.overlaps(lane, now)) {
        if (o.to < from) continue;
        const r = el('rect', { x: x(o.from), y: y + 1, width: Math.max(4, x(o.to) - x(o.from)), height: row - 2, class: 'tl-overlap' });
        r.append(el('title', {}, `${lane.key} held twice: ${o.a.holder} (fence ${o.a.fence}) and ${o.b.holder} (fence ${o.b.fence})`));
        this.svg.append(r);
        problems.push(`${lane.key} held by ${o.a.holder} and ${o.b.holder} at once`);
      }
      for (const m of this.store.timeline.marks) {
        if (m.key !== lane.key || m.at < from) continue;
        const cx = x(m.at);
        const mark = el('path', { d: `M${cx - 6} ${y} L${cx + 6} ${y} L${cx} ${y + 10} Z`, class: 'tl-verdict' });
        mark.append(el('title', {}, `Hub verdict: duplicate run of ${m.workflow} on ${m.key}`));
        this.svg.append(mark);
        problems.push(`hub verdict: duplicate run of ${m.workflow} on ${m.key}`);
      }
      y += row;
    }
    this.svg.setAttribute('aria-label',
      `Timeline of the last ${minutes(span)}: ${wfs.length} workflows, ${locks.length} lock keys`);
    const said = problems.length ? `Needs attention: ${[...new Set(problems)].join('; ')}.` : 'Nothing needs attention in this window.';
    if (this.summary.textContent !== said) this.summary.textContent = said;
  }
}

function el(name, attrs, textContent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (textContent != null) e.textContent = textContent;
  return e;
}

function clip(s) {
  return s.length > 24 ? `${s.slice(0, 23)}…` : s;
}

function minutes(ms) {
  if (ms >= 3600000) return `${Math.round(ms / 360000) / 10} h`;
  return ms >= 60000 ? `${Math.round(ms / 6000) / 10} min` : `${Math.round(ms / 1000)} s`;
}
