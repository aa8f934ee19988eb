// Formatting for a screen read from across a room: short, unit-bearing, no locale surprises in numbers.

const pad = (n, w = 2) => String(n).padStart(w, '0');

/** Local wall-clock time with milliseconds, for the event log. */
export function clock(ms) {
  if (!Number.isFinite(ms)) return '—';
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** A duration as "42 s", "3 min 05 s", "2 h 07 min". */
export function duration(ms) {
  if (!Number.isFinite(ms)) return '—';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${pad(s % 60)} s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${pad(m % 60)} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** Coarser than duration, for "updated … ago" labels that change once a second at most. */
export function age(ms) {
  if (!Number.isFinite(ms)) return '—';
  if (ms < 1500) return 'just now';
  return `${duration(ms)} ago`;
}

export function percent(p) {
  if (!Number.isFinite(p)) return '';
  return `${Math.round(p * 100)}%`;
}

/**
 * A progress event's progress as the console reads it: { value } for a fraction from 0 to 1 (docs/schemas), or
 * { value: NaN, invalid } naming what came instead (40, "0.5", -1): shown as invalid, never clamped into a bar.
 * An absent field is { value: NaN, invalid: '' }.
 */
export function progressValue(v) {
  if (v == null) return { value: NaN, invalid: '' };
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1) return { value: v, invalid: '' };
  let shown;
  try { shown = JSON.stringify(v) ?? String(v); } catch { shown = String(v); }
  return { value: NaN, invalid: shown.length > 40 ? `${shown.slice(0, 40)}…` : shown };
}

export function count(n) {
  return Number.isFinite(n) ? n.toLocaleString('en-US') : '0';
}

/** One line describing any event's data, for the log. */
export function summarize(type, data) {
  if (data == null) return '';
  if (typeof data !== 'object') return String(data);
  if (type === 'progress') {
    const parts = [];
    if (data.step != null) parts.push(String(data.step));
    const p = progressValue(data.progress);
    if (p.invalid) parts.push(`progress ${p.invalid} (invalid: not from 0 to 1)`);
    else if (Number.isFinite(p.value)) parts.push(percent(p.value));
    if (data.status) parts.push(String(data.status));
    const head = parts.join(' · ');
    return data.message ? `${head}${head ? ' — ' : ''}${data.message}` : head || compact(data);
  }
  if (type === 'lock') {
    const who = data.holder ? ` by ${data.holder}` : '';
    const fence = data.fence != null ? ` · fence ${data.fence}` : '';
    const ttl = Number.isFinite(data.ttl_ms) ? ` · ttl ${duration(data.ttl_ms)}` : '';
    return `${data.key ?? '?'} ${data.state ?? ''}${who}${fence}${ttl}`;
  }
  if (type === 'health') {
    const key = data.key ? ` on ${data.key}` : '';
    return `hub verdict: ${data.verdict ?? '?'}${key}${data.detail ? ` — ${data.detail}` : ''}`;
  }
  for (const k of ['message', 'msg', 'text', 'line']) {
    if (typeof data[k] === 'string') return data[k];
  }
  return compact(data);
}

function compact(v) {
  const s = JSON.stringify(v);
  return s.length > 400 ? `${s.slice(0, 399)}…` : s;
}

/** Parses "2s", "1500ms", "1m", "90" (seconds) into milliseconds, or NaN. */
export function parseDuration(s) {
  if (s == null) return NaN;
  const m = String(s).trim().match(/^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/i);
  if (!m) return NaN;
  const unit = { ms: 1, s: 1000, m: 60000, h: 3600000 }[(m[2] || 's').toLowerCase()];
  return Number(m[1]) * unit;
}
