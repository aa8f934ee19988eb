// The console's modules: no import cycle, and the rules they share defined once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = new URL('../static/', import.meta.url).pathname;
const files = readdirSync(dir).filter((f) => f.endsWith('.js'));
const source = Object.fromEntries(files.map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
const imports = Object.fromEntries(files.map((f) => [f,
  [...source[f].matchAll(/^import[^'"]*['"]\.\/([^'"/]+\.js)['"]/gm)].map((m) => m[1])]));

test('no module imports itself through others', () => {
  const path = [];
  const done = new Set();
  const visit = (f) => {
    if (path.includes(f)) assert.fail(`import cycle: ${[...path.slice(path.indexOf(f)), f].join(' → ')}`);
    if (done.has(f)) return;
    path.push(f);
    for (const g of imports[f] || []) visit(g);
    path.pop();
    done.add(f);
  };
  files.forEach(visit);
});

test('shared rules have one definition', () => {
  for (const [name, re] of [['HELD', /\bconst HELD\s*=/], ['shownStatus', /function shownStatus\b/], ['TOPIC_RE', /TOPIC_RE\s*=/]]) {
    const where = files.filter((f) => re.test(source[f]));
    assert.ok(where.length <= 1, `${name} is defined in ${where.join(', ')}`);
  }
  assert.ok(!files.some((f) => /TOPIC_RE\s*=/.test(source[f])), 'the topic rule comes from the JS client (validTopic)');
});
