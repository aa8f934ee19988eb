// The event log: newest first, bounded, filterable, pausable. New rows are built into one fragment per frame; the
// list is rebuilt from the store only when a filter changes or the log resumes. A stored event's row has a "trace"
// disclosure (traceview.js) that asks the hub for the event's trace id when, and only when, it is opened.
import { clock } from './format.js';
import { TraceControls, traceButton, traceDetail } from './traceview.js';

export class LogView {
  constructor(store, { list, count, text, type, workflow, workflowOptions, pause, multiTopic, lookUp }) {
    this.store = store;
    this.traces = new TraceControls(list, lookUp);
    this.multiTopic = multiTopic;
    this.list = list;
    this.countEl = count;
    this.typeEl = type;
    this.workflowOptions = workflowOptions;
    this.pauseEl = pause;
    this.filter = { text: '', type: '', workflow: '' };
    this.paused = false;
    this.missed = 0;
    this.rebuild = true;
    this.knownTypes = new Set();
    this.knownWorkflows = new Set();
    this.shown = 0;
    text.addEventListener('input', () => this.setFilter({ text: text.value.trim().toLowerCase() }));
    type.addEventListener('change', () => this.setFilter({ type: type.value }));
    workflow.addEventListener('input', () => this.setFilter({ workflow: workflow.value.trim() }));
    pause.addEventListener('click', () => this.togglePause());
    this.inputs = { text, type, workflow };
  }

  setFilter(f) {
    Object.assign(this.filter, f);
    if ('workflow' in f && this.inputs.workflow.value !== f.workflow) this.inputs.workflow.value = f.workflow;
    this.rebuild = true;
  }

  togglePause() {
    this.paused = !this.paused;
    this.pauseEl.setAttribute('aria-pressed', String(this.paused));
    this.pauseEl.textContent = this.paused ? 'Resume' : 'Pause';
    this.list.dataset.paused = String(this.paused);
    if (!this.paused) { this.missed = 0; this.rebuild = true; }
  }

  matches(e) {
    const f = this.filter;
    if (f.type && e.type !== f.type) return false;
    if (f.workflow && e.workflow !== f.workflow) return false;
    if (!f.text) return true;
    return [e.text, e.workflow, e.type, e.topic, e.id].some((v) => v && v.toLowerCase().includes(f.text));
  }

  render() {
    const s = this.store;
    const fresh = s.newLog;
    s.newLog = [];
    this.learn(fresh);
    if (this.paused) {
      this.missed += fresh.filter((e) => this.matches(e)).length;
      this.renderCount();
      return;
    }
    if (this.rebuild) {
      this.rebuild = false;
      const rows = s.logTail().filter((e) => this.matches(e));
      const frag = document.createDocumentFragment();
      for (let i = rows.length - 1; i >= 0; i--) frag.append(row(rows[i], this.multiTopic));
      this.list.replaceChildren(frag);
      this.shown = rows.length;
      this.traces.settle();
    } else if (fresh.length) {
      const frag = document.createDocumentFragment();
      let added = 0;
      for (let i = fresh.length - 1; i >= 0; i--) {
        if (!this.matches(fresh[i])) continue;
        frag.append(row(fresh[i], this.multiTopic));
        added++;
      }
      if (added) {
        this.list.prepend(frag);
        this.shown += added;
        while (this.shown > s.logLimit && this.list.lastElementChild) {
          this.list.lastElementChild.remove();
          this.shown--;
        }
        this.traces.settle();
      }
    }
    this.renderCount();
  }

  renderCount() {
    const f = this.filter;
    const filtered = f.text || f.type || f.workflow ? ' (filtered)' : '';
    this.countEl.textContent = this.paused
      ? `paused · ${this.missed} new`
      : `${this.shown} of last ${this.store.logLimit}${filtered}`;
  }

  /** Keeps the type and workflow pickers in step with what has been seen. */
  learn(entries) {
    for (const e of entries) {
      if (e.type && !this.knownTypes.has(e.type)) {
        this.knownTypes.add(e.type);
        const opt = new Option(e.type, e.type);
        const opts = [...this.typeEl.options].slice(1);
        const before = opts.find((o) => o.value > e.type);
        this.typeEl.add(opt, before || null);
      }
      if (e.workflow && !this.knownWorkflows.has(e.workflow) && this.knownWorkflows.size < 2000) {
        this.knownWorkflows.add(e.workflow);
        this.workflowOptions.append(new Option(e.workflow));
      }
    }
  }
}

function row(e, multiTopic) {
  const li = document.createElement('li');
  li.className = `log-row level-${e.level}`;
  if (e.id) li.dataset.id = e.id;
  if (e.topic) li.dataset.topic = e.topic;
  li.dataset.type = e.type;
  li.dataset.source = e.source;
  if (e.workflow) li.dataset.workflow = e.workflow;
  const time = document.createElement('time');
  time.textContent = clock(e.time);
  time.dateTime = new Date(e.time).toISOString();
  const type = document.createElement('span');
  type.className = 'log-type';
  type.textContent = e.source === 'ephemeral' ? `${e.type} · ephemeral` : e.source === 'replay' ? `${e.type} · replay` : e.type;
  const wf = document.createElement('span');
  wf.className = 'log-wf';
  wf.textContent = multiTopic && e.topic && e.workflow ? `${e.topic} · ${e.workflow}` : e.workflow || e.topic;
  const text = document.createElement('span');
  text.className = 'log-text';
  text.textContent = e.text;
  li.dataset.n = String(e.n);
  li.append(time, type, wf, text);
  if (e.level !== 'info') li.prepend(levelMark(e.level));
  if (e.id && e.topic && e.source !== 'ephemeral' && e.source !== 'console') {
    li.append(traceButton(e));
    if (e.traceOpen) li.append(traceDetail(e));
  }
  return li;
}

function levelMark(level) {
  const s = document.createElement('span');
  s.className = 'sr-only';
  s.textContent = level === 'error' ? 'Error: ' : 'Warning: ';
  return s;
}
