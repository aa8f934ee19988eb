// The words the console's parts share about workflows and locks, one copy each: store.js, cards.js, locks.js and
// timeline.js import them from here (and none of those imports another for them).

export const STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];
export const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** Lock states in which the holder holds the key. */
export const HELD = new Set(['acquired', 'renewed']);

/**
 * The status a card shows: "stalled" for a workflow the hub judged stalled, or, while no verdict exists, one the
 * page's own timer finds silent past its stall setting (wf.stallHint says which).
 */
export function shownStatus(wf) {
  if (wf.stalled) return 'stalled';
  return STATUSES.includes(wf.status) ? wf.status : 'unknown';
}
