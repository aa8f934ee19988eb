// An event's trace id, looked up on demand: the stream's EventSource cannot read the SSE `trace:` line, so the log
// asks GET /topics/{topic}/history for that one event when the operator wants it, and never before.

const MAX_SEQ = 18446744073709551615n; // a stream id's seq is a 64-bit unsigned number
const ID_RE = /^(\d{1,20})-(\d{1,20})$/;
const TRACEPARENT_RE = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The stream id just before id, as `after` of a history query that starts at id: "ms-(seq-1)", or
 * "(ms-1)-18446744073709551615" when seq is 0. '' for "0-0" (the query then starts at the oldest event); null for
 * something that is not a stream id.
 */
export function idBefore(id) {
  const m = typeof id === 'string' ? ID_RE.exec(id) : null;
  if (!m) return null;
  const ms = BigInt(m[1]), seq = BigInt(m[2]);
  if (ms > MAX_SEQ || seq > MAX_SEQ) return null;
  if (seq > 0n) return `${ms}-${seq - 1n}`;
  if (ms > 0n) return `${ms - 1n}-${MAX_SEQ}`;
  return '';
}

/** The 32-hex trace id of a traceparent, or '' when it is not one. */
export function traceIdOf(traceparent) {
  const m = typeof traceparent === 'string' ? TRACEPARENT_RE.exec(traceparent) : null;
  return m ? m[1] : '';
}

/**
 * Asks the hub for one event's traceparent through client.getJSON (the console's credentials).
 * @returns {Promise<{trace:string}|{error:string}>} trace is '' for an event without one; error is in words
 */
export async function lookUpTrace(client, topic, id) {
  const after = idBefore(id);
  if (after === null) return { error: `Cannot look up a trace: "${id}" is not a stored event's id.` };
  const q = new URLSearchParams({ limit: '1' });
  if (after) q.set('after', after);
  let answer;
  try {
    answer = await client.getJSON(`/topics/${encodeURIComponent(topic)}/history?${q}`);
  } catch (err) {
    return { error: lookupError(err) };
  }
  const ev = Array.isArray(answer?.events) ? answer.events[0] : null;
  if (!ev || ev.id !== id) return { error: 'This event is no longer in the topic\'s history, so its trace is unknown.' };
  return { trace: traceIdOf(ev.trace) };
}

function lookupError(err) {
  if (err?.status === 401) return 'Could not look up the trace: you are not signed in (sign in and try again).';
  if (err?.status === 403) return 'Could not look up the trace: your sign-in may not read this topic\'s history.';
  if (err?.status) return `Could not look up the trace: the hub answered ${err.status} (${err.message}).`;
  return `Could not look up the trace: the hub cannot be reached (${err?.message || 'no answer'}).`;
}
