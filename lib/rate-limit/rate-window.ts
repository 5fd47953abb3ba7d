import type { RateLimit } from '../job-queue.options';

/** Buckets per interval: the window's resolution (an interval of 1 s counts in 10 ms steps). */
export const BUCKETS_PER_INTERVAL = 100;

/** A window's stored state: counts of claims per bucket, the last one being bucket `head`. */
export interface RateWindowState {
  head: number;
  counts: number[];
}

/** How one rate limit cuts time into buckets. */
export interface RateGeometry {
  /** Bucket width in ms (may be fractional). */
  width: number;
  /** Buckets per interval. */
  buckets: number;
}

/** The buckets counted at some time, oldest first: `counts[i]` is bucket `first + i`. */
export interface LiveCounts {
  first: number;
  counts: number[];
}

export function rateGeometry(rule: RateLimit): RateGeometry {
  const buckets = Math.min(BUCKETS_PER_INTERVAL, rule.intervalMs);
  return { width: rule.intervalMs / buckets, buckets };
}

function bucketOf(ms: number, g: RateGeometry): number {
  return Math.floor(ms / g.width);
}

/**
 * The buckets still counted at `nowMs`: from `buckets` before the current one up to the newest
 * stored, which may lie ahead of now (a claim is recorded at its latest handler start, see
 * recordClaims). A record in bucket b counts while now < (b + buckets + 1) × width, so every
 * record at most one interval old is counted. A clock that went far backwards (another server's
 * reading, a step) keeps the stored buckets counted until it catches up.
 */
export function currentCounts(state: RateWindowState, nowMs: number, g: RateGeometry): LiveCounts {
  const now = bucketOf(nowMs, g);
  const storedFirst = state.head - state.counts.length + 1;
  let first = Math.max(now - g.buckets, Math.min(storedFirst, now));
  if (state.counts.length && state.head - first > state.counts.length + 4 * g.buckets) first = storedFirst;
  const last = Math.max(first, state.counts.length ? state.head : first);
  const counts = new Array<number>(last - first + 1).fill(0);
  state.counts.forEach((n, i) => {
    const at = storedFirst + i - first;
    if (at >= 0 && at < counts.length) counts[at] += n;
  });
  return { first, counts };
}

/** Claims the window allows now. */
export function rateRoom(rule: RateLimit, counts: readonly number[]): number {
  return Math.max(0, rule.limit - counts.reduce((a, b) => a + b, 0));
}

/**
 * The state after `claimed` more claims admitted at `nowMs` whose handlers start at the latest
 * `aheadMs` later: they are recorded at that latest start, so any sliding interval of handler
 * starts (not only of admissions) holds at most the limit, however late within `aheadMs` each
 * one starts. Leading and trailing empty buckets are trimmed.
 */
export function recordClaims(state: RateWindowState, nowMs: number, claimed: number, g: RateGeometry, aheadMs = 0): RateWindowState {
  const { first, counts } = currentCounts(state, nowMs, g);
  const at = Math.max(first, bucketOf(nowMs + aheadMs, g));
  while (first + counts.length - 1 < at) counts.push(0);
  counts[at - first] += claimed;
  const lo = counts.findIndex((n) => n > 0);
  if (lo < 0) return { head: state.head, counts: [] };
  let hi = counts.length - 1;
  while (counts[hi] === 0) hi--;
  return { head: first + hi, counts: counts.slice(lo, hi + 1) };
}

/**
 * Milliseconds from `nowMs` until the window has room for one more claim: when enough of the
 * oldest counted buckets have left it. 0 if there is room now.
 */
export function reopensInMs(rule: RateLimit, state: RateWindowState, nowMs: number, g: RateGeometry): number {
  const { first, counts } = currentCounts(state, nowMs, g);
  let used = counts.reduce((a, b) => a + b, 0);
  if (used < rule.limit) return 0;
  for (let i = 0; i < counts.length; i++) {
    used -= counts[i];
    if (used < rule.limit) {
      // Bucket first + i leaves the window when the current bucket is `buckets` + 1 further on.
      const leavesAt = (first + i + g.buckets + 1) * g.width;
      return Math.max(1, Math.ceil(leavesAt - nowMs));
    }
  }
  return 1;
}

/** Text form stored in `job_queue_rate_limits.counts`: comma-separated, oldest first. */
export function encodeCounts(counts: readonly number[]): string {
  return counts.join(',');
}

export function decodeCounts(text: unknown): number[] {
  if (text == null || text === '') return [];
  return String(text)
    .split(',')
    .map((n) => Number(n) || 0);
}
