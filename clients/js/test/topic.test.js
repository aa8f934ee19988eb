// The topic rule the console and any other user of the client check names with, as the hub has it.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { validTopic } from '../hubclient.js';

test('validTopic takes what the hub takes', () => {
  for (const t of ['demo', 'project.42', 'a:b_c-d', 'x'.repeat(128)]) assert.ok(validTopic(t), t);
  for (const t of ['', 'a b', 'a*', '{a}', 'x'.repeat(129), 'ä', null, 7]) assert.ok(!validTopic(t), String(t));
});
