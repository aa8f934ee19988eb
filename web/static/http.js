// The console's requests to the hub, other than the stream: JSON answers, and the pace of retries.

const MAX_BACKOFF_MS = 30000;

/** GETs a JSON answer; a refusal throws an Error carrying the status and the hub's JSON error body. */
export async function getJSON(url) {
  const res = await fetch(url, { headers: { Accept: 'application/json' }, cache: 'no-store' });
  let body = null;
  try { body = await res.json(); } catch { /* reported below with the status */ }
  if (!res.ok) {
    const err = new Error(body?.error || `${res.status} ${res.statusText}`);
    err.status = res.status;
    err.body = body;
    throw err;
  }
  return body;
}

/**
 * One call to /auth/session. Never throws: an unreachable hub is status 0. date is the hub's clock (from the Date
 * header), in ms, or NaN.
 * @returns {Promise<{status:number, body:any, date:number}>}
 */
export async function sessionCall(method, body = undefined) {
  let res;
  try {
    res = await fetch('/auth/session', { method, body, headers: { Accept: 'application/json' }, cache: 'no-store' });
  } catch (err) {
    return { status: 0, body: { error: `the hub cannot be reached (${err.message})` }, date: NaN };
  }
  let json = null;
  try { json = await res.json(); } catch { /* 204, or not JSON: the status says enough */ }
  return { status: res.status, body: json || {}, date: Date.parse(res.headers.get('Date') || '') };
}

/** The wait before retry number attempt: doubling up to 30 s, with jitter so consoles do not retry together. */
export function backoff(attempt) {
  const base = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(attempt, 5));
  return base / 2 + Math.random() * base / 2;
}

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}
