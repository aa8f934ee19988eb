// Entry point: reads the page URL, wires the model, the feed and the views, and renders once per animation frame.
import { validTopic } from './client/hubclient.js';
import { Store } from './store.js';
import { Feed } from './feed.js';
import { Session } from './session.js';
import { SignInView, spoken } from './signin.js';
import { CardsView } from './cards.js';
import { LogView } from './logview.js';
import { lookUpTrace } from './trace.js';
import { AlarmsView, LocksView, StatusView } from './panels.js';
import { TimelineView } from './timeline.js';
import { Announcer } from './announce.js';
import { WatchersView } from './watchers.js';
import { age, count, parseDuration } from './format.js';

const $ = (id) => document.getElementById(id);
const DEFAULT_STALL_MS = 60000;

const params = new URLSearchParams(location.search);
const topics = [...new Set(params.getAll('topic').flatMap((t) => t.split(',')).map((t) => t.trim()).filter(Boolean))];
const badTopics = topics.filter((t) => !validTopic(t));
const goodTopics = topics.filter((t) => validTopic(t));

const stallFromURL = parseDuration(params.get('stall_after'));
const stallSaved = Number(localStorage.getItem('hub.stallAfterMs'));
const stallAfterMs = stallFromURL > 0 ? stallFromURL : stallSaved > 0 ? stallSaved : DEFAULT_STALL_MS;
const logLimit = Math.min(20000, Math.max(50, Number(params.get('log')) || 1000));

const store = new Store({ stallAfterMs, logLimit });
const multiTopic = goodTopics.length > 1;

let frame = 0;
let backup = 0;
/** Coalesces every change until the next frame; a timer backs it up when frames stop (hidden tab). */
function schedule() {
  if (frame) return;
  frame = requestAnimationFrame(flush);
  backup = setTimeout(flush, 500);
}

const announcer = new Announcer($('announce'));
const feed = new Feed({
  topics: goodTopics,
  store,
  types: (params.get('types') || '').split(',').map((t) => t.trim()).filter(Boolean),
  onChange: schedule,
  probe: () => session.probe(),
  onSignedOut: (answer) => { session.refused(answer); schedule(); },
  onPresence: (p) => watchersView.update(p),
});
// The session asks /auth/session through the same client as the stream, so both send the same credentials.
const session = new Session({ api: feed.client,
  onChange: (state) => { announcer.say(spoken(state, session, Date.now())); schedule(); } });
const signin = new SignInView(session, {
  panel: $('signin'), title: $('signin-title'), reason: $('signin-reason'), form: $('signin-form'),
  token: $('signin-token'), login: $('signin-login'), error: $('signin-error'), who: $('session'),
  whoText: $('session-who'), signOut: $('sign-out'), denied: $('denied'), feed, topics: goodTopics,
  onSignedIn: () => { begin(); (goodTopics.length ? $('cards') : $('topic-input')).focus(); },
  onSignOut: () => { sessionStorage.setItem('hub.signedOut', '1'); location.reload(); },
});
const cards = new CardsView(store, {
  root: $('cards'), empty: $('empty'), summary: $('summary'), filter: $('card-filter'), multiTopic,
  onSelect: (workflow) => { logView.setFilter({ workflow }); schedule(); },
  onStatus: (wf, status) => announcer.workflow(wf.key, wf.title || wf.workflow, status),
});
const logView = new LogView(store, {
  list: $('log'), count: $('log-count'), text: $('log-text'), type: $('log-type'), workflow: $('log-workflow'),
  workflowOptions: $('workflow-options'), pause: $('log-pause'), multiTopic,
  // An event's trace id, asked of the history API only when its row's "trace" is opened, with the stream's credentials.
  lookUp: (topic, id) => lookUpTrace(feed.client, topic, id),
});
const locksView = new LocksView(store.locks, { body: $('locks'), empty: $('locks-empty'), count: $('locks-count') });
const timelineView = new TimelineView($('timeline'), store);
$('timeline').addEventListener('toggle', () => timelineView.render(Date.now(), true));
const alarmsView = new AlarmsView(store.locks, $('alarms'), { afterFocus: $('cards') });
const watchersView = new WatchersView($('watchers'), goodTopics);
const statusView = new StatusView(feed, {
  conn: $('conn'), label: $('conn-label'), detail: $('conn-detail'),
  counters: [...document.querySelectorAll('[data-counter]')], heartbeat: $('heartbeat-age'), latency: $('latency'),
  lastReset: $('last-reset'),
});
for (const el of [$('summary'), $('card-filter'), $('log-text'), $('log-type'), $('log-workflow'), $('log-pause'),
  $('alarms')]) {
  el.addEventListener('input', schedule);
  el.addEventListener('click', schedule);
}

function flush() {
  cancelAnimationFrame(frame);
  clearTimeout(backup);
  frame = 0;
  const started = performance.now();
  const now = Date.now();
  cards.render(now);
  logView.render();
  locksView.render(now);
  timelineView.render(now);
  alarmsView.render();
  statusView.render(now);
  watchersView.render();
  signin.render(now);
  announcer.feed(feed.state);
  announcer.flush(now);
  debug.renders++;
  debug.frameMs.push(performance.now() - started);
  if (debug.frameMs.length > 300) debug.frameMs.shift();
}

setInterval(() => {
  const now = Date.now();
  store.tick(now);
  session.tick(now);
  feed.tick(now);
  cards.renderClocks(now);
  schedule();
}, 1000);

// A test or a curious operator reads the console's own view of itself here.
const debug = {
  topics: goodTopics,
  get state() { return feed.state; },
  get states() { return feed.history.map((h) => h.state); },
  get stateHistory() { return feed.history.slice(); },
  get counts() { return { ...feed.counts, workflows: store.workflows.size, log: store.log.length,
    alarms: store.locks.active().length, locks: store.locks.byKey.size }; },
  get cursor() { return feed.cursor(); },
  get lastReset() { return feed.lastReset; },
  get session() { return { state: session.state, stateAt: session.stateAt, subject: session.subject, expAt: session.expAt,
    promptAt: session.promptAt, denied: [...feed.denied.keys()] }; },
  get stallAfterMs() { return store.stallAfterMs; },
  logIds: () => store.log.filter((e) => e.id).map((e) => ({ topic: e.topic, id: e.id })),
  workflow: (workflow, topic = goodTopics[0]) => ({ ...store.workflows.get(`${topic}\u0000${workflow}`) }),
  renders: 0,
  /** Script time of the last renders, to keep "smooth at 500 workflows and 100 events/s" checkable. */
  frameMs: [],
};
window.__hub = debug;

function setupStall() {
  const input = $('stall-after');
  input.value = String(Math.round(store.stallAfterMs / 1000));
  if (stallFromURL > 0 && stallFromURL < 1000) input.value = '1';
  input.addEventListener('change', () => {
    const s = Number(input.value);
    if (!(s > 0)) { input.value = String(Math.round(store.stallAfterMs / 1000)); return; }
    localStorage.setItem('hub.stallAfterMs', String(s * 1000));
    store.setStallAfter(s * 1000);
    schedule();
  });
}

const THEMES = ['auto', 'light', 'dark'];
function setupTheme() {
  const btn = $('theme-toggle');
  const apply = (t) => {
    document.documentElement.dataset.theme = t;
    btn.textContent = `Theme: ${t[0].toUpperCase()}${t.slice(1)}`;
    localStorage.setItem('hub.theme', t);
  };
  const fromURL = params.get('theme');
  apply(THEMES.includes(fromURL) ? fromURL : THEMES.includes(localStorage.getItem('hub.theme'))
    ? localStorage.getItem('hub.theme') : 'auto');
  btn.addEventListener('click', () => apply(THEMES[(THEMES.indexOf(document.documentElement.dataset.theme) + 1) % 3]));
}

function followTopics(list) {
  const q = new URLSearchParams(location.search);
  q.delete('topic');
  for (const t of list) q.append('topic', t);
  location.search = q.toString();
}

function setupTopics() {
  const input = $('topic-input');
  input.value = topics.join(', ');
  $('topic-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const list = input.value.split(/[\s,]+/).filter(Boolean);
    const bad = list.filter((t) => !validTopic(t));
    input.setCustomValidity(bad.length ? `Not a topic name: ${bad.join(', ')} (letters, digits, . _ : -)` : '');
    if (!input.reportValidity()) return;
    if (list.length) followTopics(list);
  });
  input.addEventListener('input', () => input.setCustomValidity(''));
  const dialog = $('topics-dialog');
  $('browse-topics').addEventListener('click', async () => {
    dialog.showModal();
    await fillTopicList($('topics-list'), $('topic-options'));
  });
  $('topics-follow').addEventListener('click', () => {
    const chosen = [...dialog.querySelectorAll('input[type=checkbox]:checked')].map((c) => c.value);
    if (chosen.length) followTopics(chosen);
  });
}

/** Lists GET /topics; on the landing page (no topic chosen) this is the main content. */
async function fillTopicList(root, datalist) {
  root.textContent = 'Loading topics…';
  try {
    const res = await feed.client.getJSON('/topics');
    const list = (res.topics || []).slice().sort((a, b) => Date.parse(b.last_activity) - Date.parse(a.last_activity));
    datalist.replaceChildren(...list.map((t) => new Option(t.name)));
    if (!list.length) { root.textContent = 'No topics with history yet. Publish an event to create one.'; return; }
    const table = document.createElement('table');
    table.className = 'topics-table';
    table.innerHTML = '<thead><tr><th scope="col"><span class="sr-only">Follow</span></th><th scope="col">Topic</th>' +
      '<th scope="col" class="num">Events</th><th scope="col">Last activity</th></tr></thead><tbody></tbody>';
    const body = table.tBodies[0];
    for (const t of list) {
      const tr = body.insertRow();
      tr.dataset.topic = t.name;
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.value = t.name;
      box.checked = goodTopics.includes(t.name);
      box.setAttribute('aria-label', `Follow ${t.name}`);
      tr.insertCell().append(box);
      const a = document.createElement('a');
      a.href = `?topic=${encodeURIComponent(t.name)}`;
      a.textContent = t.name;
      tr.insertCell().append(a);
      const n = tr.insertCell();
      n.className = 'num';
      n.textContent = count(t.length);
      const when = Date.parse(t.last_activity);
      tr.insertCell().textContent = Number.isFinite(when) ? age(Date.now() - when) : '—';
    }
    root.replaceChildren(table);
    if (res.truncated) {
      const p = document.createElement('p');
      p.className = 'muted';
      p.textContent = `Showing the first ${list.length} topics; type a name above to follow another.`;
      root.append(p);
    }
  } catch (err) {
    root.textContent = `Could not list topics: ${err.message}`;
  }
}

function isTyping(el) {
  return el && (el.tagName === 'INPUT' || el.tagName === 'SELECT' || el.tagName === 'TEXTAREA' || el.isContentEditable);
}

function setupKeys() {
  const focus = (id) => { const el = $(id); el.focus(); if (el.select) el.select(); };
  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
    if (e.key === 'Escape' && isTyping(e.target)) {
      if (e.target.value) { e.target.value = ''; e.target.dispatchEvent(new Event('input', { bubbles: true })); }
      else e.target.blur();
      return;
    }
    if (isTyping(e.target) || document.querySelector('dialog[open]')) return;
    const actions = {
      '/': () => focus('log-text'), f: () => focus('card-filter'), t: () => focus('topic-input'),
      w: () => cards.focus(), p: () => logView.togglePause(), a: () => alarmsView.acknowledgeNewest(),
      d: () => $('theme-toggle').click(), '?': () => $('help-dialog').showModal(), s: () => signin.focus(),
    };
    const act = actions[e.key.length === 1 ? e.key.toLowerCase() : e.key];
    if (!act) return;
    e.preventDefault();
    act();
    schedule();
  });
  $('help-open').addEventListener('click', () => $('help-dialog').showModal());
}

function landing() {
  feed.setState('idle');
  cards.idle = true;
  const empty = $('empty');
  empty.hidden = false;
  empty.replaceChildren();
  const h = document.createElement('h3');
  h.textContent = 'Choose topics to follow';
  const p = document.createElement('p');
  p.textContent = badTopics.length
    ? `Not a valid topic name: ${badTopics.join(', ')}. Names use letters, digits and . _ : - (up to 128).`
    : 'Type topic names above, or pick from the topics that have history:';
  const list = document.createElement('div');
  list.className = 'topics-list';
  const follow = document.createElement('button');
  follow.type = 'button';
  follow.textContent = 'Follow selected';
  follow.addEventListener('click', () => {
    const chosen = [...list.querySelectorAll('input[type=checkbox]:checked')].map((c) => c.value);
    if (chosen.length) followTopics(chosen);
  });
  empty.append(h, p, list, follow);
  fillTopicList(list, $('topic-options'));
}

let begun = false;
/** Starts the board once the page may ask the hub for it; after a later sign-in, resumes it from its positions. */
function begin() {
  if (session.state !== 'unknown') feed.grant(session.subscribe);
  cards.idle = !goodTopics.length;
  store.orderDirty = true; // repaints the empty area's words
  if (goodTopics.length) {
    feed.start();
    if (!begun && badTopics.length) store.note(`Ignored invalid topic names: ${badTopics.join(', ')}`, 'warn');
  } else if (!begun) {
    landing();
  }
  begun = true;
}

/**
 * One question first: who are we? Signed out, the page asks the hub for nothing more until the operator signs in,
 * so a console left open without a session costs the hub nothing.
 */
async function boot() {
  session.byOperator = sessionStorage.getItem('hub.signedOut') === '1';
  sessionStorage.removeItem('hub.signedOut');
  await session.check();
  if (!session.usable) {
    feed.stop('signed-out', session.reason);
    cards.idle = true;
    $('empty').hidden = false;
    $('empty').textContent = 'Nothing to show until you sign in.';
    signin.render(Date.now());
    signin.focus();
    return;
  }
  begin();
}

setupTheme();
setupStall();
setupTopics();
setupKeys();
$('topics-shown').textContent = goodTopics.length ? goodTopics.join(', ') : '—';
document.title = goodTopics.length ? `${goodTopics.join(', ')} · SyncVerse Hub` : 'SyncVerse Hub · Operations';
schedule();
boot();
