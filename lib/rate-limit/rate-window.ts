import type { RateLimit } from '../job-queue.options';

/** Buckets per interval: the window's resolution (an interval of 1 s counts in 10 ms steps). */
export const BUCKETS_PER_INTERVAL = 100;
/**
 * Extra buckets counted beyond the interval. A claim is recorded at the database's clock read
 * under the lock, the handler starts a few milliseconds later (commit, dispatch); counting
 * slightly more than the interval keeps any sliding window of handler starts within the limit
 * despite that jitter (6 buckets: 60 ms for a 1 s interval), at the cost of about 6% of the rate.
 */
export const GUARD_BUCKETS = 6;

/** A window's stored state: counts of claims per bucket, the last one being bucket `head`. */
export interface RateWindowState {
  head: number;
  counts: number[];
  /**
   * The bucket width (ms) `head` and `counts` were counted in; absent in rows written before it
   * was stored. A bucket number means nothing without it once the limit's interval changes.
   */
  width?: number;
}

/** How one rate limit cuts time into buckets. */
export interface RateGeometry {
  /** Bucket width in ms (may be fractional). */
  width: number;
  /** Buckets counted, the current one included. */
  span: number;
}

/** How late after its admission a job may start with every sliding window of starts still within the limit. */
export function startGraceMs(rule: RateLimit): number {
  return GUARD_BUCKETS * rateGeometry(rule).width;
}

export function rateGeometry(rule: RateLimit): RateGeometry {
  const buckets = Math.min(BUCKETS_PER_INTERVAL, rule.intervalMs);
  return { width: rule.intervalMs / buckets, span: buckets + 1 + GUARD_BUCKETS };
}

/**
 * The counts of the buckets counted at `nowMs`, oldest first, `span` long: the stored counts
 * moved forward to the current bucket (buckets that fell out of the window are dropped). A
 * clock that went backwards (another server's reading, a step) keeps the stored head.
 */
export function currentCounts(state: RateWindowState, nowMs: number, g: RateGeometry): { head: number; counts: number[] } {
  const now = Math.floor(nowMs / g.width);
  const head = Math.max(now, state.head);
  const counts = new Array<number>(g.span).fill(0);
  state.counts.forEach((n, i) => {
    const bucket = state.head - state.counts.length + 1 + i;
    const at = bucket - (head - g.span + 1);
    if (at >= 0 && at < g.span) counts[at] += n;
  });
  return { head, counts };
}

/**
 * The stored window as this limit counts it at `nowMs`. A row counted in another bucket width
 * (the interval changed between restarts, or differs in a rolling deploy) is moved onto this
 * width by time, each count into the bucket holding the end of its old one, so it leaves the
 * window no earlier than it should: read as it was, a head of 10 ms buckets counted in 600 ms
 * ones lay thousands of years ahead, and every claim was admitted to start then. A head still
 * further ahead than any admission records (a row of a release that did not store the width, or
 * the database's clock stepped back) is brought to now, its counts kept: they hold the limit
 * for up to one more interval instead of holding every claim until the clock catches up.
 */
export function windowAt(state: RateWindowState, nowMs: number, rule: RateLimit, g: RateGeometry): RateWindowState {
  let { head, counts } = state;
  if (state.width !== undefined && state.width !== g.width && counts.length) {
    const from = state.width;
    const to = (bucket: number) => Math.ceil(((bucket + 1) * from) / g.width) - 1;
    const newHead = to(head);
    const moved = new Array<number>(g.span).fill(0);
    counts.forEach((n, i) => {
      const at = to(head - counts.length + 1 + i) - (newHead - g.span + 1);
      if (at >= 0) moved[at] += n;
    });
    head = newHead;
    counts = moved;
  } else if (state.width !== undefined && state.width !== g.width) {
    head = 0;
  }
  const latest = Math.floor((nowMs + lookaheadMs(rule)) / g.width) + 1;
  if (head > latest) head = Math.floor(nowMs / g.width);
  return { head, counts, width: g.width };
}

/** Claims the window allows now. */
export function rateRoom(rule: RateLimit, counts: readonly number[]): number {
  return Math.max(0, rule.limit - counts.reduce((a, b) => a + b, 0));
}

/** The state after `claimed` more claims at `nowMs`. Trailing zeros of old buckets are trimmed. */
export function recordClaims(state: RateWindowState, nowMs: number, claimed: number, g: RateGeometry): RateWindowState {
  const { head, counts } = currentCounts(state, nowMs, g);
  counts[counts.length - 1] += claimed;
  const first = counts.findIndex((n) => n > 0);
  return { head, counts: first < 0 ? [] : counts.slice(first), width: g.width };
}

/**
 * Milliseconds from `nowMs` until the window has room for one more claim: when enough of the
 * oldest counted buckets have left it. 0 if there is room now.
 */
export function reopensInMs(rule: RateLimit, state: RateWindowState, nowMs: number, g: RateGeometry): number {
  const { head, counts } = currentCounts(state, nowMs, g);
  let used = counts.reduce((a, b) => a + b, 0);
  if (used < rule.limit) return 0;
  for (let i = 0; i < counts.length; i++) {
    used -= counts[i];
    if (used < rule.limit) {
      // Bucket (head - span + 1 + i) leaves the window when the current bucket is span further on.
      const leavesAt = (head + 1 + i) * g.width;
      return Math.max(1, Math.ceil(leavesAt - nowMs));
    }
  }
  return 1;
}

/** The longest a claim admits jobs ahead of their window's reopening. */
export const MAX_LOOKAHEAD_MS = 200;

/**
 * How far ahead of a window's reopening a claim may admit jobs, to start them at that moment:
 * a fifth of the interval, at most 200 ms. Without it each reopening would wait for a timer,
 * then a claim transaction, before anything started, and under load that lag (tens of ms on
 * every reopening) cost more of the rate than the guard does.
 */
export function lookaheadMs(rule: RateLimit): number {
  return Math.min(MAX_LOOKAHEAD_MS, Math.floor(rule.intervalMs / 5));
}

/** What a window admits for one claim: how many jobs, dated (and started) at `atMs`. */
export interface Admission {
  atMs: number;
  room: number;
}

/**
 * When, and how many, jobs a window admits to a claim made at `nowMs`. Never before the window's
 * head: jobs admitted ahead were counted in a later bucket, and a job counted there must not
 * start earlier. If the window is full then, the room it has at its reopening, provided that
 * comes within `lookahead` of now; otherwise none.
 */
export function admission(rule: RateLimit, state: RateWindowState, nowMs: number, g: RateGeometry, lookahead: number): Admission {
  const from = Math.max(nowMs, state.head * g.width);
  const room = rateRoom(rule, currentCounts(state, from, g).counts);
  if (room > 0) return { atMs: from, room };
  const at = from + reopensInMs(rule, state, from, g);
  if (at - nowMs > lookahead) return { atMs: from, room: 0 };
  return { atMs: at, room: rateRoom(rule, currentCounts(state, at, g).counts) };
}

/**
 * Milliseconds until a claim could be admitted again (by `admission`, so `lookahead` before the
 * window reopens), at least 1; undefined if the window has room now.
 */
export function claimAgainInMs(rule: RateLimit, state: RateWindowState, nowMs: number, g: RateGeometry, lookahead: number): number | undefined {
  const from = Math.max(nowMs, state.head * g.width);
  if (rateRoom(rule, currentCounts(state, from, g).counts) > 0) return undefined;
  const at = from + reopensInMs(rule, state, from, g);
  return Math.max(1, Math.ceil(at - nowMs - lookahead));
}

/**
 * Text form stored in `job_queue_rate_limits.counts`: comma-separated, oldest first, after the
 * bucket width and a colon (`10:3,0,1`; a release that predates the width reads the first
 * count as 0).
 */
export function encodeCounts(counts: readonly number[], width?: number): string {
  return width === undefined ? counts.join(',') : `${width}:${counts.join(',')}`;
}

export function decodeCounts(text: unknown): number[] {
  return decodeWindow(text).counts;
}

/** The counts, and the width they were counted in if the text says (see encodeCounts). */
export function decodeWindow(text: unknown): { counts: number[]; width?: number } {
  let body = text == null ? '' : String(text);
  let width: number | undefined;
  const colon = body.indexOf(':');
  if (colon >= 0) {
    const w = Number(body.slice(0, colon));
    if (w > 0 && Number.isFinite(w)) width = w;
    body = body.slice(colon + 1);
  }
  const counts = body === '' ? [] : body.split(',').map((n) => Number(n) || 0);
  return width === undefined ? { counts } : { counts, width };
}
