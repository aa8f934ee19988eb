// The client's requests other than the stream: JSON answers of the hub, and /auth/session, which never throws.

/** GETs a JSON answer; a refusal throws an Error carrying the status and the hub's JSON error body. */
export async function getJSON(fetch, url, init) {
  const res = await fetch(url, init);
  let body = null;
  try { body = await res.json(); } catch { /* reported below with the status */ }
  if (!res.ok) {
    throw Object.assign(new Error(body?.error || `${res.status} ${res.statusText}`), { status: res.status, body });
  }
  return body;
}

/**
 * One call to /auth/session. An unreachable hub is status 0. date is the hub's clock (from the Date header), in
 * ms, or NaN.
 */
export async function sessionCall(fetch, url, init) {
  let res;
  try {
    res = await fetch(url, init);
  } catch (err) {
    return { status: 0, body: { error: `the hub cannot be reached (${err.message})` }, date: NaN };
  }
  let json = null;
  try { json = await res.json(); } catch { /* 204, or not JSON: the status says enough */ }
  return { status: res.status, body: json || {}, date: Date.parse(res.headers.get('Date') || '') };
}
