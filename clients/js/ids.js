// The hub's positions: stream ids are "<ms>-<seq>" as Redis assigns them; a multi-topic cursor is
// "topicA=ID;topicB=ID" whose first position is the topic and id of the event that carried it. Also the pace of
// retries and the reading of a session's subscribe grant, which every client of the hub needs the same way.

/** A topic as the hub takes it: 1 to 128 of A-Z a-z 0-9 . _ : - (hub.ValidTopic, the Python client's check_topic). */
export const TOPIC_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/** Whether the hub takes topic as a topic name. */
export function validTopic(topic) {
  return typeof topic === 'string' && TOPIC_RE.test(topic);
}

/** @returns {{ms:number, seq:number}|null} */
export function parseId(id) {
  if (typeof id !== 'string' || id === '') return null;
  const dash = id.indexOf('-');
  const ms = Number(dash < 0 ? id : id.slice(0, dash));
  const seq = dash < 0 ? 0 : Number(id.slice(dash + 1));
  if (!Number.isFinite(ms) || !Number.isFinite(seq)) return null;
  return { ms, seq };
}

/** Orders two stream ids; an unparsable id sorts first so it never hides a real one. */
export function cmpId(a, b) {
  const x = parseId(a), y = parseId(b);
  if (!x || !y) return (x ? 1 : 0) - (y ? 1 : 0);
  return x.ms - y.ms || x.seq - y.seq;
}

/** The Redis time (ms) at which the event was stored, or NaN. */
export function idTime(id) {
  const p = parseId(id);
  return p && p.ms > 0 ? p.ms : NaN;
}

function decodePart(s) {
  // Topic names and ids never need escaping, but a server that escapes anyway must not break us.
  if (!s.includes('%')) return s;
  try { return decodeURIComponent(s); } catch { return s; }
}

/**
 * Splits an SSE id into the event's own topic and id plus every position it carries.
 * @param {string} raw the MessageEvent's lastEventId
 * @param {string[]} topics the topics of the connection
 * @returns {{topic:string, id:string, positions:Map<string,string>}|null}
 */
export function parseEventId(raw, topics) {
  if (!raw) return null;
  if (!raw.includes('=')) {
    if (topics.length !== 1) return null;
    return { topic: topics[0], id: raw, positions: new Map([[topics[0], raw]]) };
  }
  const positions = new Map();
  let first = null;
  for (const part of raw.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const topic = decodePart(part.slice(0, eq));
    const id = decodePart(part.slice(eq + 1));
    positions.set(topic, id);
    if (!first) first = { topic, id };
  }
  return first ? { ...first, positions } : null;
}

/**
 * Builds the resume cursor for a connection from one position per topic. A topic without a position is left out:
 * the hub starts it at its newest event, as it does a one-topic connection without a cursor.
 */
export function formatCursor(topics, positionOf) {
  if (topics.length === 1) return positionOf(topics[0]) || '';
  return topics.filter((t) => positionOf(t)).map((t) => `${t}=${positionOf(t)}`).join(';');
}

/** Whether a subscribe grant covers topic: "*", the topic itself, or a prefix pattern ending in "*". */
export function grants(patterns, topic) {
  return Array.isArray(patterns) && patterns.some((p) => typeof p === 'string' &&
    (p.endsWith('*') ? topic.startsWith(p.slice(0, -1)) : p === topic));
}

/**
 * The wait before retry number attempt (0, 1, ...): doubling from minMs up to maxMs, each wait drawn from its upper
 * half so that clients dropped together do not come back together.
 */
export function backoff(attempt, { minMs = 1000, maxMs = 30000 } = {}) {
  const base = Math.min(maxMs, minMs * 2 ** Math.min(Math.max(attempt, 0), 16));
  return base / 2 + Math.random() * base / 2;
}
