// Sign-in as the operator sees it: the panel that says why the hub wants a sign-in and takes a token (or links to
// the organisation's login page), who is signed in and until when in the header, the prompt before the session
// ends, and the topics this sign-in may not watch.
import { setText } from './dom.js';
import { clock, duration } from './format.js';
import { loginHref } from './session.js';

const TITLES = {
  'signed-out': 'Sign in to follow progress',
  expiring: 'Your session is about to end',
  expired: 'Your session has ended',
};

export class SignInView {
  /**
   * @param {import('./session.js').Session} session
   * @param {{panel:HTMLElement, title:HTMLElement, reason:HTMLElement, form:HTMLFormElement, token:HTMLInputElement,
   *   login:HTMLAnchorElement, error:HTMLElement, who:HTMLElement, whoText:HTMLElement, signOut:HTMLButtonElement,
   *   denied:HTMLElement, feed:{denied:Map<string,string>}|null, topics:string[], onSignedIn:()=>void,
   *   onSignOut:()=>void}} opts
   */
  constructor(session, opts) {
    this.session = session;
    this.el = opts;
    this.busy = false;
    opts.form.addEventListener('submit', (e) => { e.preventDefault(); this.submit(); });
    opts.token.addEventListener('input', () => this.error(''));
    opts.signOut.addEventListener('click', () => this.signOut());
  }

  async submit() {
    const token = this.el.token.value.trim();
    if (this.busy) return;
    if (!token) { this.error('Paste a token first.'); return; }
    this.busy = true;
    this.error('');
    const problem = await this.session.signIn(token);
    this.busy = false;
    if (problem) { this.error(problem); return; }
    this.el.token.value = ''; // the cookie holds it now; the page keeps no copy
    this.render(Date.now());
    this.el.onSignedIn();
  }

  async signOut() {
    const problem = await this.session.signOut();
    if (problem) { this.el.whoText.textContent = `Could not sign out: ${problem}`; return; }
    this.el.onSignOut();
  }

  error(text) {
    if (this.el.error.textContent !== text) this.el.error.textContent = text;
  }

  /** Puts the keyboard in the token field; true when the panel is showing. */
  focus() {
    if (this.el.panel.hidden) return false;
    this.el.token.focus();
    return true;
  }

  render(now) {
    const s = this.session;
    const prompt = s.state === 'signed-out' || s.state === 'expired' || s.state === 'expiring';
    const panel = this.el.panel;
    panel.hidden = !prompt;
    panel.dataset.state = s.state;
    if (prompt) this.renderPanel(now);
    this.renderWho(now);
    this.renderDenied();
  }

  renderPanel(now) {
    const s = this.session;
    setText(this.el.title, s.byOperator ? 'You are signed out' : TITLES[s.state]);
    setText(this.el.reason, this.reasonText(now));
    const href = loginHref(s.loginURL, location.href);
    this.el.login.hidden = !href;
    if (href && this.el.login.href !== href) this.el.login.href = href;
  }

  reasonText(now) {
    const s = this.session;
    const what = this.el.topics.length ? `follow ${this.el.topics.join(', ')}` : 'list the topics';
    if (s.state === 'expiring') {
      return `Signed in as ${s.subject || 'an unnamed client'} until ${hhmmss(s.expAt)}, ` +
        `${duration(s.expAt - now)} from now. Sign in again now to keep following without a break.`;
    }
    if (s.state === 'expired') {
      return `The board below is as it was when the session ended; sign in again to resume from there. ` +
        `Nothing published meanwhile is lost. (The hub said: ${s.reason}.)`;
    }
    if (s.byOperator) return `Sign in again to ${what}.`;
    return `This hub shows progress only to signed-in operators, and this browser is not signed in, so it cannot ` +
      `${what}. (The hub said: ${s.reason}.)`;
  }

  renderWho(now) {
    const s = this.session;
    const signedIn = s.state === 'signed-in' || s.state === 'expiring' || (s.state === 'open' && s.subject);
    this.el.who.hidden = !signedIn;
    if (!signedIn) return;
    this.el.who.dataset.state = s.state;
    const name = s.subject || 'signed in';
    let ends = Number.isFinite(s.expAt) ? ` · until ${hhmmss(s.expAt)}` : '';
    if (s.state === 'expiring') ends += `, ends in ${duration(s.expAt - now)}`;
    setText(this.el.whoText, `${name}${ends}`);
    this.el.whoText.title = Number.isFinite(s.expAt)
      ? `Signed in as ${name}; the session ends at ${new Date(s.expAt).toString()}` : `Signed in as ${name}`;
  }

  renderDenied() {
    const denied = [...(this.el.feed?.denied || new Map())];
    const key = denied.map(([topic]) => topic).join(',');
    this.el.denied.hidden = denied.length === 0;
    if ((this.el.denied.dataset.topics ?? '') === key) return;
    this.el.denied.dataset.topics = key;
    this.el.denied.replaceChildren(...denied.map(([topic, reason]) => {
      const li = document.createElement('li');
      li.dataset.topic = topic;
      li.textContent = `You may not watch ${topic}: ${reason}.`;
      return li;
    }));
  }
}

/** The prompt's words for a screen reader, said once when the prompt or the end comes. */
export function spoken(state, session, now) {
  if (state === 'expiring') return `Your session ends in ${duration(session.expAt - now)}. Press S to sign in again.`;
  if (state === 'expired') return 'Your session has ended. The board is kept; press S to sign in again.';
  return '';
}

function hhmmss(ms) {
  return clock(ms).slice(0, 8);
}
