// Types of hubclient.js, the SyncVerse Progress Hub's client for browsers and Node.

/** What the client is doing; onState hears every change. */
export type HubClientState =
  | 'idle' // constructed, start() not called yet
  | 'connecting' // loading snapshots, opening the stream
  | 'live' // the stream is open and every topic is up to date with it
  | 'reset' // the hub said reset: a topic's snapshot is reloading; its events wait
  | 'backing-off' // the stream was lost or refused; it comes back after a jittered wait
  | 'signed-out' // the hub refused the credentials; nothing is asked until onAuthExpired or resume() brings new ones
  | 'forbidden' // the credentials may watch none of the topics
  | 'paused' // pause() was called
  | 'closed'; // close() was called

/** One stream id `<ms>-<seq>` of a topic. */
export type EventId = string;

/** A stored event as the hub keeps it: in snapshots and history pages. */
export interface Envelope {
  id: EventId;
  prev?: EventId;
  type: string;
  data: unknown;
}

/** GET /topics/{topic}/snapshot: the topic's state, consistent with cursor. */
export interface Snapshot {
  topic: string;
  cursor: EventId;
  workflows: Record<string, Envelope>;
  locks: Record<string, Envelope>;
  health?: Record<string, Envelope>;
  /** The id of each workflow's first event: when it began. */
  starts?: Record<string, EventId>;
  [more: string]: unknown;
}

export interface HubEvent {
  /** The event's topic; '' for an ephemeral event of a multi-topic stream that names no topic of it. */
  topic: string;
  /** The stream id; '' for an ephemeral event (a plain PUBLISH, never stored or replayed). */
  id: EventId;
  type: string;
  /** The JSON value the agent published (the raw text when it is not JSON). */
  data: unknown;
  ephemeral: boolean;
  /** Date.now() when it arrived. */
  received: number;
}

export interface SnapshotInfo {
  topic: string;
  snapshot: Snapshot;
  cursor: EventId;
  /** 'start': loaded before streaming the topic (first, or again when a new sign-in may watch it). */
  reason: string;
}

export interface ResetInfo {
  topic: string;
  /** The hub's reason: 'history-truncated', 'history-lost' or 'replay-limit'. */
  reason: string;
  /** The oldest stored event, as the hub said; '' when it named none. */
  oldest: EventId;
  /** The topic's snapshot, loaded after the reset; null with snapshots: false. */
  snapshot: Snapshot | null;
  /** Where the topic resumes: the snapshot's cursor ('' with snapshots: false: from the hub's oldest). */
  cursor: EventId;
}

/** One answer of /auth/session; status 0 when the hub cannot be reached. */
export interface SessionAnswer {
  status: number;
  body: {
    subject?: string;
    subscribe?: string[];
    publish?: string[];
    exp?: number | null;
    login_url?: string;
    error?: string;
    [more: string]: unknown;
  };
  /** The hub's clock from its Date header, in ms; NaN when absent. */
  date: number;
}

export interface AuthExpiredInfo {
  /** The hub's words, e.g. "token expired at …". */
  reason: string;
  status: number;
  answer: SessionAnswer;
}

/**
 * What onAuthExpired may give back: a new bearer token (or an object holding one), true when the session cookie was
 * renewed (the browser sends it from now on), or false/undefined to stay signed out until resume().
 */
export type AuthRenewal = string | { token?: string } | boolean | null | undefined | void;

export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

export interface EventSourceLike {
  readonly readyState: number;
  onopen: ((ev: any) => any) | null;
  onerror: ((ev: any) => any) | null;
  addEventListener(type: string, listener: (ev: any) => void): void;
  close(): void;
}

export type EventSourceConstructor = new (url: string, init?: { withCredentials?: boolean; fetch?: typeof fetch }) => EventSourceLike;

export interface HubClientOptions {
  /** One or several topics, streamed on one connection. */
  topics: string[];
  /** The hub's base URL, e.g. "https://hub.example.com"; '' (the default) is this page's origin. */
  url?: string;
  /** The browser's EventSource by default; in Node, e.g. EventSource from the eventsource package. */
  EventSource?: EventSourceConstructor;
  fetch?: typeof fetch;
  /** A bearer token sent on every request (Node, or a page holding one); browsers otherwise send the session cookie. */
  token?: string;
  /** Send cookies to a hub on another origin. */
  withCredentials?: boolean;
  /** Event types to listen for beyond EVENT_TYPES (EventSource delivers only named types that are listened for). */
  types?: string[];
  /** Positions to resume from, by topic; a topic with one starts without a snapshot. */
  positions?: Record<string, EventId>;
  /** Where positions outlive the page (sessionStorage); off by default. */
  storage?: StorageLike | null;
  /** The prefix of the storage keys, `${storageKey}:${topic}`; default "hubclient". */
  storageKey?: string;
  /** Load a snapshot before streaming a topic without a position, and after a reset; default true. */
  snapshots?: boolean;
  /** How many idempotency keys are remembered; default 50000. */
  dedupeLimit?: number;
  /** The client's own retries (refused streams, snapshots): from minMs (1 s) doubling to maxMs (30 s), jittered. */
  backoff?: { minMs?: number; maxMs?: number };
  /** Ask the hub for presence frames (presence=1): onPresence hears who watches each topic as it changes. */
  presence?: boolean;
  /** Asked after a refused or expired stream; GET /auth/session by default. */
  probe?: () => Promise<SessionAnswer>;
  onEvent?: (ev: HubEvent) => void;
  onSnapshot?: (info: SnapshotInfo) => void;
  onReset?: (info: ResetInfo) => void;
  onAuthExpired?: (info: AuthExpiredInfo) => AuthRenewal | Promise<AuthRenewal>;
  onDenied?: (info: { topic: string; reason: string }) => void;
  onState?: (change: { state: HubClientState; detail: string; attempt: number }) => void;
  onWarning?: (warning: { message: string; topic: string }) => void;
  /** A presence frame (with the presence option): at most one per topic per second, when its watchers change. */
  onPresence?: (presence: Presence) => void;
}

/** Who watches a topic across every hub; users and truncated only for credentials with the presence grant. */
export interface Presence {
  topic: string;
  count: number;
  hubs: number;
  users?: string[];
  truncated?: boolean;
}

export interface HubClientStats {
  events: number;
  ephemeral: number;
  duplicateIds: number;
  duplicateKeys: number;
  covered: number;
  resets: number;
  snapshots: number;
  opens: number;
  reconnects: number;
}

export class HubClient {
  constructor(opts: HubClientOptions);
  readonly topics: string[];
  readonly denied: Map<string, string>;
  readonly state: HubClientState;
  readonly detail: string;
  readonly attempt: number;
  readonly openedAt: number;
  readonly stats: HubClientStats;
  active(): string[];
  position(topic: string): EventId;
  cursor(): string;
  start(): Promise<void>;
  resume(opts?: { token?: string }): Promise<void>;
  pause(state?: HubClientState, detail?: string): void;
  close(): void;
  grant(patterns: string[] | undefined): boolean;
  getJSON<T = unknown>(path: string): Promise<T>;
  presence(topic: string): Promise<Presence>;
  session(): Promise<SessionAnswer>;
  signIn(token: string): Promise<SessionAnswer>;
  signOut(): Promise<SessionAnswer>;
}

export const EVENT_TYPES: string[];
export function parseId(id: string): { ms: number; seq: number } | null;
export function cmpId(a: string, b: string): number;
/** A topic as the hub takes it: 1 to 128 of A-Z a-z 0-9 . _ : - */
export const TOPIC_RE: RegExp;
export function validTopic(topic: unknown): boolean;
export function idTime(id: string): number;
export function parseEventId(raw: string, topics: string[]): { topic: string; id: EventId; positions: Map<string, EventId> } | null;
export function formatCursor(topics: string[], positionOf: (topic: string) => EventId): string;
export function grants(patterns: string[] | undefined, topic: string): boolean;
export function backoff(attempt: number, pace?: { minMs?: number; maxMs?: number }): number;
