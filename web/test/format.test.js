// The console's reading of a progress value: run with `node --test web/test/`.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { percent, progressValue, summarize } from '../static/format.js';

test('a fraction from 0 to 1 is the progress', () => {
  assert.deepEqual(progressValue(0.4), { value: 0.4, invalid: '' });
  assert.deepEqual(progressValue(0), { value: 0, invalid: '' });
  assert.deepEqual(progressValue(1), { value: 1, invalid: '' });
  assert.deepEqual(progressValue(undefined), { value: NaN, invalid: '' });
  assert.equal(percent(0.4), '40%');
});

test('a value outside 0..1, or not a number, is invalid and never clamped', () => {
  for (const [v, shown] of [[40, '40'], [-0.1, '-0.1'], [1.5, '1.5'], ['0.5', '"0.5"'], [true, 'true'], [[1], '[1]']]) {
    const p = progressValue(v);
    assert.ok(Number.isNaN(p.value), `progressValue(${shown}).value = ${p.value}, want NaN`);
    assert.equal(p.invalid, shown);
  }
  assert.equal(progressValue('x'.repeat(60)).invalid, `"${'x'.repeat(39)}…`);
});

test('the event log names an invalid progress instead of drawing 100 %', () => {
  assert.equal(summarize('progress', { workflow: 'wf-1', step: 'build', progress: 40 }),
    'build · progress 40 (invalid: not from 0 to 1)');
  assert.equal(summarize('progress', { workflow: 'wf-1', step: 'build', progress: 0.4 }), 'build · 40%');
});
