// The live hub the tests run against: the hub binary built from this tree, a real redis-server on a free port (so a
// hub restart keeps the data), and helpers to publish, sign tokens, and wait for what a client saw.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { EventSource } from 'eventsource';

import { HubClient } from '../hubclient.js';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const work = mkdtempSync(path.join(os.tmpdir(), 'hubclient-test-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
let built = null;

/** Builds the hub once per test file: `go build -o <tmp>/hub .` at the repository's root. */
export function hubBinary() {
  built ||= run('go', ['build', '-o', path.join(work, 'hub'), '.'], { cwd: root, maxBuffer: 1 << 24 })
    .then(() => path.join(work, 'hub'));
  return built;
}

/** The environment without HUB_* variables: the hub refuses one it does not know. */
function cleanEnv(extra) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HUB_')));
  return { ...env, ...extra };
}

export async function freePort() {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

/** A redis-server of its own for the test, without persistence; stopped when the test ends. */
export async function startRedis(t) {
  const port = await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' });
  t.after(() => proc.kill('SIGKILL'));
  const cli = async (...args) => (await run('redis-cli', ['-p', String(port), ...args])).stdout.trim();
  await waitFor(async () => (await cli('PING').catch(() => '')) === 'PONG', 10000, `redis-server on ${port} answers`);
  return { url: `redis://127.0.0.1:${port}`, port, cli };
}

/**
 * Runs `hub serve` on listen (127.0.0.1:0 by default) until stop(); start() again on the same address is a hub
 * restart. The URL comes from the {"message":"hub listening"} line the hub writes on stdout.
 */
export async function startHub(t, redis, env = {}) {
  const bin = await hubBinary();
  const hub = { url: '', addr: '127.0.0.1:0', proc: null, log: [] };
  hub.start = async () => {
    const proc = spawn(bin, ['serve', '--listen', hub.addr], {
      env: cleanEnv({ HUB_REDIS_URL: redis.url, HUB_SSE_RETRY: '300ms', ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
    hub.proc = proc;
    createInterface({ input: proc.stderr }).on('line', (l) => { hub.log.push(l); if (hub.log.length > 200) hub.log.shift(); });
    const exited = new Promise((r) => proc.once('exit', (code) => r(`exited with ${code}`)));
    const listening = new Promise((resolve) => createInterface({ input: proc.stdout }).on('line', (line) => {
      try { const m = JSON.parse(line); if (m.message === 'hub listening') resolve(m.url); } catch { /* not JSON */ }
    }));
    const url = await Promise.race([listening, exited]);
    if (!url.startsWith('http')) throw new Error(`hub ${url}:\n${hub.log.join('\n')}`);
    hub.url = url;
    hub.addr = new URL(url).host;
  };
  hub.stop = async () => {
    const proc = hub.proc;
    if (!proc || proc.exitCode !== null) return;
    const gone = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await gone;
  };
  hub.publish = (topic, data, { type = 'progress', token = '' } = {}) => publish(hub.url, topic, data, { type, token });
  /** `hub publish` straight into Redis: works while the hub is down. */
  hub.publishDirect = async (topic, data) => (await run(bin, ['publish', '--topic', topic, '--data', JSON.stringify(data)],
    { env: cleanEnv({ HUB_REDIS_URL: redis.url, ...env }) })).stdout.trim();
  hub.token = async (...args) => (await run(bin, ['token', ...args], { env: cleanEnv(env) })).stdout.trim();
  t.after(() => hub.stop());
  await hub.start();
  return hub;
}

export async function publish(url, topic, data, { type = 'progress', token = '' } = {}) {
  const headers = { 'Content-Type': 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(`${url}/publish`, { method: 'POST', headers, body: JSON.stringify({ topic, type, data }) });
  const body = await res.json();
  if (res.status !== 202) throw new Error(`POST /publish ${topic} = ${res.status} ${JSON.stringify(body)}`);
  return body.id;
}

/** Polls cond every 20 ms until it holds; fails with what after within ms. */
export async function waitFor(cond, within, what, state = () => '') {
  const deadline = Date.now() + within;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not true within ${within} ms ${state()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A client on hub with Node's EventSource that records what it delivers; closed when the test ends. */
export function watch(t, hub, topics, opts = {}) {
  const seen = { events: [], states: [], resets: [], snapshots: [], warnings: [], auth: [] };
  const client = new HubClient({
    url: hub.url, topics, EventSource,
    onEvent: (ev) => seen.events.push(ev),
    onState: ({ state, detail }) => seen.states.push(detail ? `${state}: ${detail}` : state),
    onReset: (r) => seen.resets.push(r),
    onSnapshot: (s) => seen.snapshots.push(s),
    onWarning: (w) => seen.warnings.push(w.message),
    ...opts,
  });
  t.after(() => client.close());
  const ids = (topic) => seen.events.filter((e) => e.topic === topic).map((e) => e.id);
  const dump = () => JSON.stringify({ state: client.state, states: seen.states.slice(-12), stats: client.stats,
    events: seen.events.length, warnings: seen.warnings.slice(-5) });
  return { client, seen, ids, dump };
}

/** The states reduced to their names, e.g. ['connecting', 'live', 'backing-off', 'live']. */
export function stateNames(seen) {
  return seen.states.map((s) => s.split(':')[0]).filter((s, i, a) => s !== a[i - 1]);
}

export function hasSubsequence(have, ...want) {
  let i = 0;
  for (const s of have) if (i < want.length && s === want[i]) i++;
  return i === want.length;
}
