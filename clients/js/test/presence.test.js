// HubClient and presence: client.presence(topic) asks who watches a topic, and a client with the presence option
// hears presence frames through onPresence as watchers come and go, without any position moving.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { startHub, startRedis, waitFor, watch } from '../harness/hub.js';

const live = { timeout: 300000 };

test('presence: a count on request, and frames as watchers come and go', live, async (t) => {
  const redis = await startRedis(t);
  const hub = await startHub(t, redis, { HUB_PRESENCE_ENABLED: 'true', HUB_PRESENCE_INTERVAL: '1s', HUB_PRESENCE_EXPIRY: '3s' });
  const heard = [];
  const w = watch(t, hub, ['js.presence'], { presence: true, snapshots: false, onPresence: (p) => heard.push(p) });
  await w.client.start();
  await waitFor(() => w.client.state === 'live', 10000, 'live', w.dump);
  await waitFor(() => heard.some((p) => p.topic === 'js.presence' && p.count === 1), 10000, 'a frame counting us', w.dump);

  const other = watch(t, hub, ['js.presence'], { snapshots: false });
  await other.client.start();
  await waitFor(() => heard.some((p) => p.count === 2), 10000, 'a frame counting the second watcher', w.dump);
  const answer = await w.client.presence('js.presence');
  assert.equal(answer.topic, 'js.presence');
  assert.equal(answer.count, 2);
  assert.equal(answer.hubs, 1);
  assert.equal(answer.users, undefined, 'anonymous credentials see the count only');

  other.client.close();
  await waitFor(() => heard.at(-1).count === 1, 10000, 'a frame after the second watcher left', w.dump);
  assert.equal(w.client.position('js.presence'), '', 'presence frames never move a position');
  assert.equal(w.seen.events.length, 0, 'presence frames are not events');
});
