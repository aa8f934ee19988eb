// HubClient with an injected EventSource constructor: the frames a hub sends, and some it must never send, handed
// to the client one by one, so the rules the live tests cannot provoke are pinned down too.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { HubClient } from '../hubclient.js';

class FakeEventSource {
  static made = [];
  constructor(url, init) {
    this.url = new URL(url);
    this.init = init;
    this.readyState = 0;
    this.listeners = new Map();
    this.lastEventId = '';
    FakeEventSource.made.push(this);
  }
  addEventListener(type, fn) { this.listeners.set(type, [...(this.listeners.get(type) || []), fn]); }
  close() { this.readyState = 2; }
  open() { this.readyState = 1; this.onopen?.({}); }
  fail(readyState) { this.readyState = readyState; this.onerror?.({}); }
  /** A frame as EventSource delivers it: lastEventId stays the previous one when the frame has no id. */
  frame(type, data, id = undefined) {
    if (id !== undefined) this.lastEventId = id;
    for (const fn of this.listeners.get(type) || []) fn({ type, data: JSON.stringify(data), lastEventId: this.lastEventId });
  }
}

function client(opts = {}) {
  FakeEventSource.made = [];
  const seen = { events: [], states: [], auth: [] };
  const c = new HubClient({
    url: 'http://hub.test', topics: ['a'], EventSource: FakeEventSource, snapshots: false,
    fetch: async () => { throw new Error('no fetch in this test'); },
    onEvent: (ev) => seen.events.push(ev), onState: ({ state }) => seen.states.push(state), ...opts,
  });
  return { c, seen, es: () => FakeEventSource.made.at(-1) };
}

test('the stream opens from the given positions; a topic without one is left out of the cursor', async () => {
  const { c, es } = client({ topics: ['a', 'b', 'c'], positions: { a: '5-0', c: '7-1' } });
  await c.start();
  assert.deepEqual(es().url.searchParams.getAll('topic'), ['a', 'b', 'c']);
  assert.equal(es().url.searchParams.get('last_event_id'), 'a=5-0;c=7-1');
  es().open();
  es().frame('progress', { workflow: 'w' }, 'b=9-0;a=5-0;c=7-1');
  assert.equal(c.cursor(), 'a=5-0;b=9-0;c=7-1');
  c.close();
});

test('an id at or below the position is dropped, whatever the stream repeats', async () => {
  const { c, seen, es } = client({ positions: { a: '10-0' } });
  await c.start();
  es().open();
  for (const id of ['9-0', '10-0', '11-0', '10-5', '11-0', '12-0']) es().frame('progress', { workflow: 'w', id }, id);
  assert.deepEqual(seen.events.map((e) => e.id), ['11-0', '12-0']);
  assert.equal(c.stats.duplicateIds, 4);
  c.close();
});

test('control frames that carry an id are ignored; ephemeral events are delivered without one', async () => {
  const { c, seen, es } = client({ positions: { a: '1-0' }, onAuthExpired: () => { throw new Error('asked'); } });
  await c.start();
  es().open();
  es().frame('progress', { workflow: 'w' }, '2-0');
  es().frame('auth-expired', {}, '3-0');
  es().frame('reset', { topic: 'a', reason: 'history-lost' }, '3-1');
  es().frame('progress', { workflow: 'w', tick: true });
  assert.equal(c.state, 'live');
  assert.equal(c.stats.resets, 0);
  assert.equal(FakeEventSource.made.length, 1, 'the stream was not reopened');
  assert.deepEqual(seen.events.map((e) => [e.id, e.ephemeral]), [['2-0', false], ['', true]]);
  c.close();
});

test('a refused stream asks the probe once; a 401 signs out and onAuthExpired brings a token for the next one', async () => {
  let probes = 0;
  const sent = [];
  const { c, seen, es } = client({
    positions: { a: '4-0' }, token: 'old',
    fetch: async (url, init) => { sent.push(init.headers); return new Response('{}'); },
    probe: async () => { probes++; return { status: 401, body: { error: 'token expired' }, date: NaN }; },
    onAuthExpired: async (info) => { assert.equal(info.reason, 'token expired'); return 'new'; },
  });
  await c.start();
  es().open();
  es().frame('progress', { workflow: 'w' }, '5-0');
  const first = es();
  first.fail(2); // EventSource gave up: a refused response
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(probes, 1);
  assert.ok(seen.states.includes('signed-out'), `states ${seen.states}`);
  assert.notEqual(es(), first, 'a new stream');
  assert.equal(es().url.searchParams.get('last_event_id'), '5-0', 'from the position delivered');
  // Node's eventsource package fetches through init.fetch: the new token goes with the stream's request.
  await es().init.fetch('http://hub.test/events', { headers: { 'Last-Event-ID': '5-0' } });
  assert.deepEqual(sent.at(-1), { 'Last-Event-ID': '5-0', Authorization: 'Bearer new' });
  c.close();
});

test('a stream lost while connecting is left to the EventSource, which retries after the hub\'s retry: hint', async () => {
  let probes = 0;
  const { c, seen, es } = client({ positions: { a: '1-0' }, probe: async () => { probes++; return null; } });
  await c.start();
  es().open();
  es().fail(0);
  assert.equal(c.state, 'backing-off');
  es().open();
  assert.deepEqual(seen.states, ['connecting', 'live', 'backing-off', 'live']);
  assert.equal(probes, 0);
  assert.equal(FakeEventSource.made.length, 1, 'no stream of our own');
  assert.equal(c.stats.reconnects, 1);
  c.close();
});

test('a reset of one topic of two holds that topic\'s events until its snapshot is in, and only that topic\'s', async () => {
  let release = null;
  const later = new Promise((r) => { release = r; });
  const order = [];
  const { c, seen, es } = client({
    topics: ['a', 'b'], snapshots: true,
    fetch: async (url) => {
      const topic = decodeURIComponent(new URL(url).pathname.split('/')[2]);
      const n = order.push(topic);
      if (topic === 'b' && n > 2) await later; // the reload after the reset takes its time
      const cursor = { a: '1-0', b: n > 2 ? '4-0' : '2-0' }[topic];
      return new Response(JSON.stringify({ topic, cursor, workflows: {}, locks: {} }));
    },
    onReset: (r) => seen.events.push({ reset: r.topic, cursor: r.cursor, reason: r.reason }),
  });
  await c.start();
  assert.equal(es().url.searchParams.get('last_event_id'), 'a=1-0;b=2-0', 'opened from the snapshots\' cursors');
  es().open();
  es().frame('progress', { n: 1 }, 'a=3-0;b=2-0');
  es().frame('reset', { topic: 'b', reason: 'history-truncated', oldest: '3-5' });
  assert.equal(c.state, 'reset');
  es().frame('progress', { n: 2 }, 'b=4-0;a=3-0');
  es().frame('progress', { n: 3 }, 'a=5-0;b=4-0');
  es().frame('progress', { n: 4 }, 'b=6-0;a=5-0');
  assert.deepEqual(seen.events.map((e) => e.id), ['3-0', '5-0'], 'a streams on; b waits');
  release();
  await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(seen.events.slice(2), [{ reset: 'b', cursor: '4-0', reason: 'history-truncated' },
    { topic: 'b', id: '6-0', type: 'progress', data: { n: 4 }, received: seen.events[3].received, ephemeral: false }]);
  assert.equal(c.stats.covered, 1, 'b 4-0 is inside the snapshot');
  assert.equal(c.state, 'live');
  assert.equal(c.cursor(), 'a=5-0;b=6-0');
  c.close();
});
