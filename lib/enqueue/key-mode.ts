/**
 * How an enqueue with a `key` treats an existing job with that key:
 * - `forever` (default): the key names one job for good; enqueueing it again returns that job.
 * - `unfinished`: a singleton while a job with the key is not finished (waiting, ready,
 *   running); once it is done, failed or cancelled, the next enqueue creates a new job.
 * - `debounce`: the job waits `debounceMs` after the latest enqueue; an enqueue while it has
 *   not been claimed yet replaces its args and pushes its `runAfter` back; once claimed, the
 *   next enqueue creates a new job.
 * - `throttle`: at most one job per key per `throttleMs` window, counted from the job that
 *   opened it; enqueues inside the window return that job.
 */
export type KeyMode = 'forever' | 'unfinished' | 'debounce' | 'throttle';
export const KEY_MODES: readonly KeyMode[] = ['forever', 'unfinished', 'debounce', 'throttle'];

/** The job currently holding a key. */
export interface KeyHolder {
  id: number;
  state: string;
}

export type KeyDecision =
  /** Return the holder unchanged. */
  | { kind: 'existing'; id: number }
  /** Replace the holder's args and run time, if it is still unclaimed; else create. */
  | { kind: 'debounce'; id: number }
  /** Create a new job (taking the key from the holder, if any). */
  | { kind: 'create' };

const UNFINISHED = new Set(['waiting', 'ready', 'leased', 'running']);

/**
 * What an enqueue in `mode` does, given the key's current holder and, for throttle, whether
 * the window opened by the holder is still open. Pure; called under the key's row lock.
 */
export function decideKey(mode: Exclude<KeyMode, 'forever'>, holder: KeyHolder | null, windowOpen: boolean): KeyDecision {
  if (!holder) return { kind: 'create' };
  switch (mode) {
    case 'unfinished':
      return UNFINISHED.has(holder.state) ? { kind: 'existing', id: holder.id } : { kind: 'create' };
    case 'debounce':
      return holder.state === 'ready' || holder.state === 'waiting' ? { kind: 'debounce', id: holder.id } : { kind: 'create' };
    case 'throttle':
      return windowOpen ? { kind: 'existing', id: holder.id } : { kind: 'create' };
  }
}
