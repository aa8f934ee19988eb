// The event log's "trace" disclosures. Each stored event's row has one; the log keeps a single one of them in the Tab
// order (the newest row's, or the one last moved to), and the arrow keys, Home and End move between rows, so a log
// of a thousand rows stays one more tab stop. Opening one looks the event up once (trace.js); its answer is kept on
// the log entry, so a rebuilt row shows it again without asking the hub twice.

const entries = new WeakMap(); // a row's trace button -> its log entry

/** The disclosure button of entry e's row: out of the Tab order until the log makes it the current one. */
export function traceButton(e) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'trace-btn';
  b.tabIndex = -1;
  b.setAttribute('aria-expanded', String(!!e.traceOpen));
  if (e.traceOpen) b.setAttribute('aria-controls', detailId(e));
  b.title = 'Show this event\'s trace id';
  const label = document.createElement('span');
  label.className = 'sr-only';
  label.textContent = ` of ${e.type} event ${e.id}`;
  b.append('trace', label);
  entries.set(b, e);
  return b;
}

/** What entry e's disclosure shows: looking up, the trace id with a copy button, "no trace", or what went wrong. */
export function traceDetail(e) {
  const d = document.createElement('div');
  d.className = 'trace-detail';
  d.id = detailId(e);
  d.setAttribute('aria-live', 'polite');
  fill(d, e.traceResult);
  return d;
}

function detailId(e) {
  return `trace-${e.n}`;
}

function fill(d, result) {
  if (!result || result === 'pending') {
    d.dataset.state = 'pending';
    d.textContent = 'Looking up the trace…';
  } else if (result.error) {
    d.dataset.state = 'error';
    d.textContent = result.error;
  } else if (!result.trace) {
    d.dataset.state = 'none';
    d.textContent = 'no trace: this event was published without a traceparent';
  } else {
    d.dataset.state = 'trace';
    const code = document.createElement('code');
    code.className = 'trace-id';
    code.textContent = result.trace;
    const copy = document.createElement('button');
    copy.type = 'button';
    copy.className = 'trace-copy';
    copy.append('Copy', Object.assign(document.createElement('span'), { className: 'sr-only', textContent: ' trace id' }));
    d.replaceChildren('Trace id ', code, ' ', copy);
  }
}

export class TraceControls {
  /** @param {HTMLElement} list the log @param {(topic:string, id:string) => Promise<object>} lookUp */
  constructor(list, lookUp) {
    this.list = list;
    this.lookUp = lookUp;
    this.currentN = ''; // the row the operator moved to or opened; until then the newest row's button is the one
    list.addEventListener('click', (ev) => this.click(ev));
    list.addEventListener('keydown', (ev) => this.key(ev));
  }

  /** After rows came or went: exactly one trace button is in the Tab order, the current row's or else the newest. */
  settle() {
    // A button with the focus stays the current one: moving the tab stop (and so its visibility) off it would drop
    // the keyboard's place when an event arrives.
    const focused = document.activeElement;
    if (focused?.classList.contains('trace-btn') && this.list.contains(focused)) {
      this.currentN = focused.closest('.log-row').dataset.n;
    }
    const row = this.currentN && this.list.querySelector(`.log-row[data-n="${this.currentN}"]`);
    const b = (row && row.querySelector(':scope > .trace-btn')) || this.list.querySelector('.trace-btn');
    if (!row) this.currentN = '';
    for (const other of this.list.querySelectorAll('.trace-btn[tabindex="0"]')) if (other !== b) other.tabIndex = -1;
    if (b) b.tabIndex = 0;
  }

  /** The operator moved to (or opened) b's row: its button is the log's tab stop from now on. */
  makeCurrent(b, focus) {
    this.currentN = b.closest('.log-row').dataset.n;
    b.tabIndex = 0; // shown, so that it can take the focus before settle looks at where the focus is
    if (focus) b.focus();
    this.settle();
  }

  click(ev) {
    const copy = ev.target.closest('.trace-copy');
    if (copy) { copyId(copy); return; }
    const b = ev.target.closest('.trace-btn');
    if (b) { this.makeCurrent(b, false); this.toggle(b); return; }
    // A click (or tap) on a row makes its button the shown one, for screens without hover.
    const rowButton = ev.target.closest('.log-row')?.querySelector(':scope > .trace-btn');
    if (rowButton) this.makeCurrent(rowButton, false);
  }

  key(ev) {
    const b = ev.target.closest?.('.trace-btn');
    if (!b || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const all = [...this.list.querySelectorAll('.trace-btn')];
    const i = all.indexOf(b);
    const to = { ArrowDown: i + 1, ArrowUp: i - 1, Home: 0, End: all.length - 1 }[ev.key];
    if (to === undefined) return;
    ev.preventDefault();
    if (all[to]) this.makeCurrent(all[to], true);
  }

  toggle(b) {
    const e = entries.get(b);
    const row = b.closest('.log-row');
    if (!e || !row) return;
    e.traceOpen = !e.traceOpen;
    b.setAttribute('aria-expanded', String(e.traceOpen));
    row.querySelector(':scope > .trace-detail')?.remove();
    if (!e.traceOpen) { b.removeAttribute('aria-controls'); return; }
    if (!e.traceResult || e.traceResult.error) this.fetch(e); // an error may pass: opening again asks again
    row.append(traceDetail(e));
    b.setAttribute('aria-controls', detailId(e));
  }

  async fetch(e) {
    e.traceResult = 'pending';
    let result;
    try {
      result = await this.lookUp(e.topic, e.id);
    } catch (err) {
      result = { error: `Could not look up the trace: ${err.message}` };
    }
    e.traceResult = result;
    const d = document.getElementById(detailId(e));
    if (d && this.list.contains(d)) fill(d, result);
  }
}

/** Copies the trace id next to button; where the clipboard is refused, selects it for Ctrl+C and says so. */
async function copyId(button) {
  const code = button.parentElement.querySelector('.trace-id');
  let said = 'Copied';
  try {
    await navigator.clipboard.writeText(code.textContent);
  } catch {
    const range = document.createRange();
    range.selectNodeContents(code);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    said = 'Selected: press Ctrl+C';
  }
  button.firstChild.textContent = said;
  setTimeout(() => { button.firstChild.textContent = 'Copy'; }, 2000);
}
