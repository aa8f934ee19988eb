// Who watches each followed topic, from the hub's presence frames (the stream asks for them with presence=1): a count
// per topic in the status bar, and the names, when the signed-in user may see them, in a tooltip shown on hover and
// on keyboard focus (each count is a focusable element described by its tooltip; Escape hides it again).

export class WatchersView {
  /** @param {HTMLElement} root the status bar entry's value; @param {string[]} topics */
  constructor(root, topics) {
    this.root = root;
    this.topics = topics;
    /** @type {Map<string, {count:number, hubs:number, users?:string[], truncated?:boolean}>} */
    this.byTopic = new Map();
    this.drawn = '';
    // The tooltip follows focus through a class (tip-open), so it shows whenever the count has focus.
    const isCount = (el) => el instanceof HTMLElement && el.classList.contains('watchers');
    root.addEventListener('focusin', (ev) => { if (isCount(ev.target)) ev.target.classList.add('tip-open'); });
    root.addEventListener('focusout', (ev) => { if (isCount(ev.target)) ev.target.classList.remove('tip-open', 'tip-hidden'); });
    root.addEventListener('keydown', (ev) => { if (ev.key === 'Escape' && isCount(ev.target)) ev.target.classList.add('tip-hidden'); });
  }

  /** A presence frame. */
  update(p) {
    if (!p || typeof p.topic !== 'string' || typeof p.count !== 'number') return;
    this.byTopic.set(p.topic, p);
  }

  render() {
    const key = JSON.stringify([...this.byTopic]);
    if (key === this.drawn) return;
    this.drawn = key;
    const focused = document.activeElement?.dataset?.topic;
    this.root.replaceChildren();
    if (!this.byTopic.size) { this.root.textContent = '—'; return; }
    this.topics.forEach((topic, i) => {
      const p = this.byTopic.get(topic);
      if (!p) return;
      const item = document.createElement('span');
      item.className = 'watchers';
      item.tabIndex = 0;
      item.dataset.topic = topic;
      const tipId = `watchers-tip-${i}`;
      item.setAttribute('aria-describedby', tipId);
      item.textContent = this.topics.length > 1 ? `${topic}: ${p.count}` : String(p.count);
      const tip = document.createElement('span');
      tip.id = tipId;
      tip.className = 'watchers-tip';
      tip.setAttribute('role', 'tooltip');
      tip.textContent = describe(p);
      item.append(tip);
      this.root.append(item);
      if (topic === focused) { item.focus(); item.classList.add('tip-open'); }
    });
  }
}

/** The tooltip's words: the names, or why there are none. */
export function describe(p) {
  const streams = `${p.count} ${p.count === 1 ? 'stream' : 'streams'} on ${p.hubs} ${p.hubs === 1 ? 'hub' : 'hubs'}`;
  if (!Array.isArray(p.users)) return `${streams}; names are shown only with the presence grant`;
  if (!p.users.length) return `${streams}; no signed-in watchers`;
  return `${streams}: ${p.users.join(', ')}${p.truncated ? ', and more' : ''}`;
}
