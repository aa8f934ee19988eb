// The console's trace look-up: which `after` finds one event, and what the operator reads for each answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { idBefore, lookUpTrace, traceIdOf } from '../static/trace.js';

test('the id before an event is seq-1, or the previous millisecond at the largest seq', () => {
  assert.equal(idBefore('1733472000000-5'), '1733472000000-4');
  assert.equal(idBefore('1733472000000-1'), '1733472000000-0');
  assert.equal(idBefore('1733472000000-0'), '1733471999999-18446744073709551615');
  assert.equal(idBefore('1-0'), '0-18446744073709551615');
  assert.equal(idBefore('0-1'), '0-0');
  assert.equal(idBefore('0-0'), '');
  // Past 2^53 a Number would round: the arithmetic is exact.
  assert.equal(idBefore('18446744073709551615-18446744073709551615'), '18446744073709551615-18446744073709551614');
  assert.equal(idBefore('9007199254740993-0'), '9007199254740992-18446744073709551615');
});

test('what is not a stream id has no id before it', () => {
  for (const bad of ['', '5', '-1', '1--1', '1-2-3', 'a-1', '1-', ' 1-1', '18446744073709551616-0', '1-18446744073709551616',
    undefined, null, 12]) {
    assert.equal(idBefore(bad), null, `idBefore(${JSON.stringify(bad)})`);
  }
});

test('the trace id is the 32 hex digits of a traceparent', () => {
  assert.equal(traceIdOf('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'), '4bf92f3577b34da6a3ce929d0e0e4736');
  for (const bad of ['', undefined, '4bf92f3577b34da6a3ce929d0e0e4736', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01']) {
    assert.equal(traceIdOf(bad), '');
  }
});

/** A stand-in for the hub's client: records the paths asked and answers with answer(path). */
function client(answer) {
  const asked = [];
  return { asked, getJSON: async (path) => { asked.push(path); return answer(path); } };
}

test('one event is asked for, after the id before it, and its trace id is shown', async () => {
  const c = client(() => ({ events: [{ id: '1733472000000-0', type: 'progress',
    trace: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', data: {} }] }));
  assert.deepEqual(await lookUpTrace(c, 'project.42', '1733472000000-0'), { trace: '4bf92f3577b34da6a3ce929d0e0e4736' });
  assert.deepEqual(c.asked, ['/topics/project.42/history?limit=1&after=1733471999999-18446744073709551615']);
});

test('an event without a trace has none; the first event of a stream is asked for from the start', async () => {
  const c = client(() => ({ events: [{ id: '0-1', type: 'log', data: {} }] }));
  assert.deepEqual(await lookUpTrace(c, 'a:b', '0-1'), { trace: '' });
  assert.deepEqual(await lookUpTrace(client(() => ({ events: [{ id: '0-0', data: 1 }] })), 't', '0-0'), { trace: '' });
  assert.equal(c.asked[0], '/topics/a%3Ab/history?limit=1&after=0-0');
});

test('an answer about another event, or none, says the event is gone from the history', async () => {
  for (const events of [[], [{ id: '1733472000000-7', trace: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }]]) {
    const got = await lookUpTrace(client(() => ({ events })), 't', '1733472000000-5');
    assert.match(got.error, /no longer in the topic's history/);
  }
});

test('a refusal or an unreachable hub is said in words, and a bad id asks nothing', async () => {
  const refuse = (status, message) => client(() => { throw Object.assign(new Error(message), { status }); });
  assert.match((await lookUpTrace(refuse(401, 'authentication required'), 't', '1-1')).error, /not signed in/);
  assert.match((await lookUpTrace(refuse(403, 'forbidden'), 't', '1-1')).error, /may not read this topic/);
  assert.match((await lookUpTrace(refuse(503, 'redis unavailable'), 't', '1-1')).error, /hub answered 503 \(redis unavailable\)/);
  const down = client(() => { throw new TypeError('Failed to fetch'); });
  assert.match((await lookUpTrace(down, 't', '1-1')).error, /cannot be reached \(Failed to fetch\)/);
  const c = client(() => ({ events: [] }));
  assert.match((await lookUpTrace(c, 't', 'nope')).error, /not a stored event's id/);
  assert.deepEqual(c.asked, []);
});
