// HubClient against the live hub: two topics on one stream, a hub restart in the middle of it, dedupe by
// idempotency key, and positions kept in a storage across a "reload".
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { hasSubsequence, startHub, startRedis, stateNames, waitFor, watch } from '../harness/hub.js';

// Bounded, so a hang fails; generous, since the first test of a file builds the hub (cold: a minute or more).
const live = { timeout: 300000 };

const step = (workflow, i) => ({ workflow, step: `step ${i}`, progress: i / 100, status: 'running' });

test('two topics on one stream: each event once, under its own topic, and a cursor per topic', live, async (t) => {
  const hub = await startHub(t, await startRedis(t));
  const before = await hub.publish('js.a', step('wf-a', 0));
  const w = watch(t, hub, ['js.a', 'js.b']);
  await w.client.start();
  await waitFor(() => w.client.state === 'live', 5000, 'live', w.dump);
  assert.equal(w.seen.snapshots.length, 2, 'a snapshot for each topic before the stream');
  assert.equal(w.seen.snapshots.find((s) => s.topic === 'js.a').cursor, before);
  const want = { 'js.a': [], 'js.b': [] };
  for (let i = 1; i <= 20; i++) {
    const topic = i % 3 ? 'js.a' : 'js.b';
    want[topic].push(await hub.publish(topic, step(`wf-${topic}`, i)));
  }
  await waitFor(() => w.seen.events.length >= 20, 5000, '20 events', w.dump);
  assert.deepEqual(w.ids('js.a'), want['js.a']);
  assert.deepEqual(w.ids('js.b'), want['js.b']);
  assert.equal(w.client.cursor(), `js.a=${want['js.a'].at(-1)};js.b=${want['js.b'].at(-1)}`);
  for (const ev of w.seen.events) assert.equal(ev.data.workflow, `wf-${ev.topic}`, `event ${ev.id} under ${ev.topic}`);
});

test('a hub restart mid-stream: no event lost, none twice, and the state says so', live, async (t) => {
  const redis = await startRedis(t);
  const hub = await startHub(t, redis);
  const w = watch(t, hub, ['js.restart']);
  await w.client.start();
  await waitFor(() => w.client.state === 'live', 5000, 'live', w.dump);
  const ids = [];
  for (let i = 0; i < 30; i++) {
    if (i === 10) await hub.stop();
    if (i === 20) await hub.start(); // the same address: the EventSource comes back by itself
    const data = step('wf-r', i);
    ids.push(i >= 10 && i < 20 ? await hub.publishDirect('js.restart', data) : await hub.publish('js.restart', data));
  }
  await waitFor(() => w.seen.events.length >= 30 && w.client.state === 'live', 15000, 'all 30 events', w.dump);
  await new Promise((r) => setTimeout(r, 300)); // a late duplicate would show up here
  assert.deepEqual(w.ids('js.restart'), ids, 'every published id once, in order');
  assert.equal(w.client.stats.duplicateIds + w.client.stats.duplicateKeys, 0, 'resumed from the last id: nothing repeated');
  assert.ok(hasSubsequence(stateNames(w.seen), 'live', 'backing-off', 'live'), `states ${stateNames(w.seen)}`);
  assert.ok(w.client.stats.reconnects >= 1, `reconnects ${w.client.stats.reconnects}`);
});

test('dedupe by idempotency_key: an agent that retries under a new id is delivered once', live, async (t) => {
  const hub = await startHub(t, await startRedis(t));
  const w = watch(t, hub, ['js.idem']);
  await w.client.start();
  await waitFor(() => w.client.state === 'live', 5000, 'live', w.dump);
  const first = await hub.publish('js.idem', { workflow: 'wf-i', step: 'upload', idempotency_key: 'wf-i/7' });
  const retry = await hub.publish('js.idem', { workflow: 'wf-i', step: 'upload', idempotency_key: 'wf-i/7' });
  const other = await hub.publish('js.idem', { workflow: 'wf-j', step: 'upload', idempotency_key: 'wf-i/7' });
  const last = await hub.publish('js.idem', { workflow: 'wf-i', step: 'verify', idempotency_key: 'wf-i/8' });
  assert.notEqual(first, retry, 'the hub stored the retry under its own id');
  await waitFor(() => w.client.position('js.idem') === last, 5000, 'the last event', w.dump);
  assert.deepEqual(w.ids('js.idem'), [first, other, last], 'the retry dropped; the same key of another workflow kept');
  assert.equal(w.client.stats.duplicateKeys, 1);
});

test('positions in a storage outlive the client: a new one resumes there without a snapshot', live, async (t) => {
  const hub = await startHub(t, await startRedis(t));
  const store = new Map();
  const storage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v) };
  const w1 = watch(t, hub, ['js.keep'], { storage });
  await w1.client.start();
  await waitFor(() => w1.client.state === 'live', 5000, 'live', w1.dump);
  const seen = await hub.publish('js.keep', step('wf-k', 1));
  await waitFor(() => w1.client.position('js.keep') === seen, 5000, 'first event', w1.dump);
  w1.client.close();
  const missed = [await hub.publish('js.keep', step('wf-k', 2)), await hub.publish('js.keep', step('wf-k', 3))];
  assert.equal(store.get('hubclient:js.keep'), seen);
  const w2 = watch(t, hub, ['js.keep'], { storage });
  await w2.client.start();
  await waitFor(() => w2.seen.events.length >= 2, 5000, 'the missed events', w2.dump);
  assert.deepEqual(w2.ids('js.keep'), missed);
  assert.equal(w2.seen.snapshots.length, 0, 'a stored position needs no snapshot');
});
