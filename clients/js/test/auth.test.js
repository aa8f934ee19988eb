// HubClient and an expiring session: a hub with an HMAC secret ends the stream with auth-expired when the client's
// 3 s token expires; the client asks the hub once (GET /auth/session: 401), onAuthExpired supplies a new token, and
// the stream resumes from the client's position with every event published meanwhile, once.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { hasSubsequence, startHub, startRedis, stateNames, waitFor, watch } from '../harness/hub.js';

// Bounded, so a hang fails; generous, since the first test of a file builds the hub (cold: a minute or more).
const live = { timeout: 300000 };

const secret = 'hubclient-test-secret-0123456789abcdef';

test('an expired session: onAuthExpired gives a new token and the stream resumes without loss', live, async (t) => {
  const hub = await startHub(t, await startRedis(t), { HUB_AUTH_HMAC_SECRET: secret });
  const agent = await hub.token('--publish', '*', '--ttl', '1h');
  const short = await hub.token('--subscribe', '*', '--ttl', '3s');
  const expired = [];
  const w = watch(t, hub, ['js.auth'], {
    token: short,
    onAuthExpired: async (info) => { expired.push(info); return hub.token('--subscribe', '*', '--ttl', '1h'); },
  });
  await w.client.start();
  await waitFor(() => w.client.state === 'live', 5000, 'live', w.dump);
  const ids = [];
  const until = Date.now() + 4500; // past the token's end
  for (let i = 0; (Date.now() < until || expired.length === 0) && i < 400; i++) {
    ids.push(await hub.publish('js.auth', { workflow: 'wf-a', step: `step ${i}` }, { token: agent }));
    await new Promise((r) => setTimeout(r, 50));
  }
  for (let i = 0; i < 5; i++) ids.push(await hub.publish('js.auth', { workflow: 'wf-a', step: `after ${i}` }, { token: agent }));
  await waitFor(() => w.client.position('js.auth') === ids.at(-1), 10000, 'every event', w.dump);
  assert.deepEqual(w.ids('js.auth'), ids, 'each published event once, in order, across the session\'s end');
  assert.equal(expired.length, 1, 'onAuthExpired asked once');
  assert.equal(expired[0].status, 401);
  assert.match(expired[0].reason, /expired/);
  assert.ok(hasSubsequence(stateNames(w.seen), 'live', 'signed-out', 'live'), `states ${stateNames(w.seen)}`);
});

test('a token that no longer works at the start: onAuthExpired is asked before anything streams', live, async (t) => {
  const hub = await startHub(t, await startRedis(t), { HUB_AUTH_HMAC_SECRET: secret });
  const asked = [];
  const w = watch(t, hub, ['js.auth2'], {
    token: 'not-a-token',
    onAuthExpired: async (info) => { asked.push(info.status); return { token: await hub.token('--subscribe', 'js.*') }; },
  });
  await w.client.start();
  await waitFor(() => w.client.state === 'live', 5000, 'live after the new token', w.dump);
  assert.deepEqual(asked, [401]);
  const id = await hub.publish('js.auth2', { workflow: 'wf-b' }, { token: await hub.token('--publish', '*') });
  await waitFor(() => w.client.position('js.auth2') === id, 5000, 'the event', w.dump);
  assert.deepEqual(w.ids('js.auth2'), [id]);
});

// Both of the hub's refusals: the snapshot's 403 (snapshots on) and the stream's 403 for a request naming a topic
// outside the grant (snapshots off), after which the client asks /auth/session for the grant and reopens without it.
for (const [how, snapshots] of [['the snapshot', true], ['the stream', false]]) {
  test(`a topic the hub refuses (${how}: 403): named through onDenied, the others stream on`, live, async (t) => {
    const hub = await startHub(t, await startRedis(t), { HUB_AUTH_HMAC_SECRET: secret });
    const agent = await hub.token('--publish', '*', '--ttl', '1h');
    const denied = [];
    const w = watch(t, hub, ['js.open', 'js.secret'], {
      token: await hub.token('--subscribe', 'js.open', '--ttl', '1h'),
      snapshots,
      onDenied: (d) => denied.push(d),
    });
    await w.client.start();
    await waitFor(() => w.client.state === 'live', 10000, 'live on the allowed topic', w.dump);
    assert.deepEqual(denied.map((d) => d.topic), ['js.secret']);
    assert.ok(w.client.denied.has('js.secret') && !w.client.denied.has('js.open'));
    const id = await hub.publish('js.open', { workflow: 'wf-open' }, { token: agent });
    await hub.publish('js.secret', { workflow: 'wf-secret' }, { token: agent });
    await waitFor(() => w.client.position('js.open') === id, 5000, 'the allowed topic\'s event', w.dump);
    assert.deepEqual(w.ids('js.open'), [id]);
    assert.deepEqual(w.ids('js.secret'), [], 'nothing of the refused topic');
  });
}
