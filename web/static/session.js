// The page's session with the hub: who is signed in, what they may watch and until when, from /auth/session. No
// token is ever kept here: POST /auth/session turns the pasted token into an HttpOnly cookie that no script can read,
// and the cookie is what EventSource and fetch carry from then on.

// The prompt to sign in again shows this long before the session ends, or half the session's length when shorter.
const PROMPT_LEAD_MS = 120000;
// A Date header is whole seconds; a smaller gap between the clocks is that rounding, not a wrong clock.
const SKEW_TOLERANCE_MS = 2000;

/** Where the login link goes: auth.login_url with ?return= this page, or '' for a URL that is not http(s). */
export function loginHref(loginURL, here) {
  if (!loginURL) return '';
  try {
    const u = new URL(loginURL, here);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return '';
    u.searchParams.set('return', here);
    return u.href;
  } catch {
    return '';
  }
}

/**
 * state is one of:
 * - unknown: not asked yet, or the hub could not say (unreachable, or a hub without /auth/session);
 * - open: the hub needs no sign-in (anonymous access), nothing ends;
 * - signed-in: until expAt; expiring: the same, within the prompt's lead of expAt;
 * - signed-out: the hub wants credentials and this page has had none that work;
 * - expired: the session this page had has ended (the board stays as it was).
 */
export class Session {
  /** @param {{api:{session:Function, signIn:Function, signOut:Function}, onChange?:Function}} opts api is the hub's client */
  constructor({ api, onChange = () => {} }) {
    this.api = api;
    this.onChange = onChange;
    this.state = 'unknown';
    this.subject = '';
    this.subscribe = [];
    this.expAt = NaN; // on the browser's clock
    this.promptAt = NaN;
    this.loginURL = '';
    this.reason = '';
    this.hadSession = false;
    this.byOperator = false;
    this.skew = 0;
    this.epoch = 0; // counts finished sign-ins and sign-outs: each changes the cookie
  }

  /** Asks who we are; returns the answer (status 0 when the hub cannot be reached). */
  async check() {
    const epoch = this.epoch;
    const answer = await this.api.session();
    // A sign-in or sign-out that finished while this question was out changed the cookie: its answer speaks of
    // the old one (a 401 from a session just renewed would sign the page out), so ask again.
    if (epoch !== this.epoch) return this.check();
    this.learn(answer);
    return answer;
  }

  /** The feed's probe after a refused stream: the same question, remembered the same way. */
  probe() {
    return this.check();
  }

  /** Trades a token for the session cookie. Returns '' on success, else what went wrong, in words. */
  async signIn(token) {
    const answer = await this.api.signIn(token);
    if (answer.status === 200) {
      this.epoch++;
      this.learn(answer);
      return '';
    }
    if (answer.status === 0) return answer.body.error;
    return `The hub refused this token: ${answer.body.error || `status ${answer.status}`}.`;
  }

  /** Clears the cookie; returns '' on success, else what went wrong. */
  async signOut() {
    const answer = await this.api.signOut();
    if (answer.status !== 204 && answer.status !== 200) return answer.body.error || `status ${answer.status}`;
    this.epoch++;
    this.byOperator = true;
    this.setState('signed-out');
    return '';
  }

  learn(answer) {
    if (Number.isFinite(answer.date)) {
      const d = answer.date - Date.now();
      this.skew = Math.abs(d) > SKEW_TOLERANCE_MS ? d : 0;
    }
    if (answer.body?.login_url) this.loginURL = String(answer.body.login_url);
    if (answer.status === 401) { this.refused(answer); return; }
    if (answer.status !== 200) return; // unreachable, or no /auth/session: the streams will tell
    const b = answer.body;
    this.subject = typeof b.subject === 'string' ? b.subject : '';
    this.subscribe = Array.isArray(b.subscribe) ? b.subscribe : [];
    this.reason = '';
    this.byOperator = false;
    if (!Number.isFinite(b.exp)) { this.expAt = NaN; this.setState('open'); return; }
    const now = Date.now();
    this.expAt = b.exp * 1000 - this.skew;
    this.promptAt = this.expAt - Math.min(PROMPT_LEAD_MS, Math.max(0, this.expAt - now) / 2);
    this.hadSession = true;
    this.setState('signed-in');
    this.tick(now);
  }

  /** The hub answered 401: to this page's first question, to a probe, or to a snapshot request. */
  refused(answer) {
    this.reason = answer?.body?.error || 'authentication required';
    if (answer?.body?.login_url) this.loginURL = String(answer.body.login_url);
    this.setState(this.hadSession && !this.byOperator ? 'expired' : 'signed-out');
  }

  /** Moves to the prompt, and past the end, by the clock; called about once a second. */
  tick(now) {
    if (this.state === 'signed-in' && now >= this.promptAt) this.setState('expiring');
    if ((this.state === 'signed-in' || this.state === 'expiring') && now >= this.expAt) {
      this.reason = 'the session has ended';
      this.setState('expired');
    }
  }

  /** Whether the page may ask the hub for anything: false once the operator has been told to sign in. */
  get usable() {
    return this.state !== 'signed-out' && this.state !== 'expired';
  }

  setState(state) {
    if (state === this.state) return;
    this.state = state;
    this.stateAt = performance.now(); // when, on the page's clock: what the console's own speed is measured by
    this.onChange(state);
  }
}
