// HubClient and the hub's reset: the history is trimmed below the client's position while it is away, so the hub
// says reset; the client hands over the topic's snapshot and goes on from its cursor, delivering nothing it covers.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { cmpId } from '../hubclient.js';
import { hasSubsequence, startHub, startRedis, stateNames, waitFor, watch } from '../harness/hub.js';

// Bounded, so a hang fails; generous, since the first test of a file builds the hub (cold: a minute or more).
const live = { timeout: 300000 };

const step = (i) => ({ workflow: 'wf-x', title: 'Reindex search', step: `shard ${i}`, progress: i / 20, status: 'running' });

test('a reset after the history was trimmed while away: a ready snapshot, then only what follows it', live, async (t) => {
  const redis = await startRedis(t);
  const hub = await startHub(t, redis);
  for (let i = 0; i < 3; i++) await hub.publish('js.reset', step(i));
  const w = watch(t, hub, ['js.reset']);
  await w.client.start();
  await waitFor(() => w.client.state === 'live', 5000, 'live', w.dump);
  const at = w.client.position('js.reset');

  await hub.stop();
  let last = '';
  for (let i = 3; i < 15; i++) last = await hub.publishDirect('js.reset', step(i));
  assert.equal(await redis.cli('XTRIM', 'hub:{js.reset}:events', 'MAXLEN', '3'), '12');
  await hub.start();

  await waitFor(() => w.seen.resets.length === 1 && w.client.state === 'live', 15000, 'the reset handled', w.dump);
  const [reset] = w.seen.resets;
  assert.equal(reset.topic, 'js.reset');
  assert.equal(reset.reason, 'history-truncated');
  assert.ok(cmpId(reset.oldest, at) > 0, `oldest ${reset.oldest} after our position ${at}`);
  assert.equal(reset.cursor, last, 'the snapshot is as new as the stream');
  assert.equal(reset.snapshot.workflows['wf-x'].data.step, 'shard 14');
  assert.equal(w.client.position('js.reset'), last);
  assert.ok(hasSubsequence(stateNames(w.seen), 'live', 'backing-off', 'reset', 'live'), `states ${stateNames(w.seen)}`);

  const next = await hub.publish('js.reset', step(15));
  await waitFor(() => w.client.position('js.reset') === next, 5000, 'the next event', w.dump);
  assert.deepEqual(w.ids('js.reset'), [next], 'nothing the snapshot covers is delivered as an event');
  assert.ok(w.client.stats.covered >= 1, `the replay after the reset was held and dropped: ${w.dump()}`);
});
