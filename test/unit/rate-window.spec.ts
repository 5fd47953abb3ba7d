import { decideKey } from '../../lib/enqueue/key-mode';
import {
  currentCounts,
  decodeCounts,
  encodeCounts,
  rateGeometry,
  rateRoom,
  recordClaims,
  reopensInMs,
  type RateWindowState,
} from '../../lib/rate-limit/rate-window';
import { StartAllowance } from '../../lib/scheduler/start-allowance';

/** The most times inside any half-open window [t, t + windowMs) that begins at one of them. */
function maxInWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let worst = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j] < sorted[i] + windowMs) j++;
    worst = Math.max(worst, j - i);
  }
  return worst;
}

describe('rate windows', () => {
  const rule = { limit: 20, intervalMs: 1_000 };
  const g = rateGeometry(rule);
  const empty: RateWindowState = { head: 0, counts: [] };
  const used = (state: RateWindowState, at: number) => currentCounts(state, at, g).counts.reduce((a, b) => a + b, 0);

  it('cuts the interval into 10 ms buckets (1 ms for short intervals)', () => {
    expect(g).toEqual({ width: 10, buckets: 100 });
    expect(rateGeometry({ limit: 1, intervalMs: 30 })).toEqual({ width: 1, buckets: 30 });
    expect(rateGeometry({ limit: 1, intervalMs: 60_000 }).width).toBe(600);
  });

  it('admits up to the limit, then reopens when the oldest claims leave the window (one interval, no margin)', () => {
    const t0 = 1_000_000;
    expect(rateRoom(rule, currentCounts(empty, t0, g).counts)).toBe(20);
    let state = recordClaims(empty, t0, 15, g);
    state = recordClaims(state, t0 + 500, 5, g);
    expect(rateRoom(rule, currentCounts(state, t0 + 600, g).counts)).toBe(0);
    // The 15 claims of bucket t0 leave one interval and one bucket later.
    const reopen = reopensInMs(rule, state, t0 + 600, g);
    expect(t0 + 600 + reopen).toBe(t0 + 1_000 + g.width);
    expect(rateRoom(rule, currentCounts(state, t0 + 600 + reopen - 1, g).counts)).toBe(0);
    expect(rateRoom(rule, currentCounts(state, t0 + 600 + reopen, g).counts)).toBe(15);
    expect(reopensInMs(rule, state, t0 + 600 + reopen, g)).toBe(0);
  });

  it('records a claim at its latest start: counted from then for a whole interval', () => {
    const t0 = 2_000_000;
    const state = recordClaims(empty, t0, 20, g, 150);
    expect(used(state, t0)).toBe(20);
    // Still counted one interval after the latest start, gone a bucket later.
    expect(used(state, t0 + 150 + 999)).toBe(20);
    expect(used(state, t0 + 150 + 1_000 + g.width)).toBe(0);
    expect(t0 + reopensInMs(rule, state, t0, g)).toBe(t0 + 150 + 1_000 + g.width);
    // Records ahead of now and behind it combine.
    const more = recordClaims(recordClaims(empty, t0, 5, g), t0 + 300, 5, g, 400);
    expect(used(more, t0 + 300)).toBe(10);
    expect(used(more, t0 + 1_100)).toBe(5);
  });

  for (const allowance of [0, 25, 150]) {
    it(`never more than the limit in any sliding interval of starts, each within ${allowance} ms of its admission (simulated greedy claimers)`, () => {
      let state = empty;
      const admissions: number[] = [];
      const starts: number[] = [];
      let t = 5_000;
      for (let step = 0; step < 5_000; step++) {
        t += 1 + ((step * 7919) % 13);
        const room = rateRoom(rule, currentCounts(state, t, g).counts);
        const take = Math.min(room, 1 + (step % 4));
        if (take > 0) {
          state = recordClaims(state, t, take, g, allowance + 1);
          for (let i = 0; i < take; i++) {
            admissions.push(t);
            // Any delay within the allowance, the worst ones included.
            starts.push(t + (i % 2 ? allowance : ((step * 31 + i * 17) % (allowance + 1))));
          }
        }
      }
      expect(maxInWindow(admissions, rule.intervalMs)).toBeLessThanOrEqual(20);
      expect(maxInWindow(starts, rule.intervalMs)).toBeLessThanOrEqual(20);
      // The rate: the limit per interval plus the allowance (and a bucket, and the simulated steps).
      const rate = (admissions.length / (admissions[admissions.length - 1] - admissions[0])) * 1_000;
      expect(rate).toBeGreaterThan((20 * 1_000) / (1_000 + allowance + 2 * g.width + 13));
    });
  }

  it('drops buckets that fell out of the window, keeps records a clock step left ahead', () => {
    const state = recordClaims(empty, 10_000, 3, g);
    expect(used(state, 10_000 + 2_000)).toBe(0);
    expect(used(state, 9_000)).toBe(3);
    // A clock far behind the stored records keeps them counted, without a huge array.
    expect(currentCounts(state, 10_000 - 3_600_000, g).counts.length).toBeLessThan(10);
    expect(used(state, 10_000 - 3_600_000)).toBe(3);
    expect(decodeCounts(encodeCounts([0, 3, 0, 1]))).toEqual([0, 3, 0, 1]);
    expect(decodeCounts('')).toEqual([]);
  });
});

describe('start allowance', () => {
  it('starts at 60 ms, then follows the 95th percentile of measured delays with headroom', () => {
    const a = new StartAllowance();
    expect(a.ms).toBe(60);
    for (let i = 0; i < 40; i++) a.observe(i < 37 ? 4 : 200);
    expect(a.ms).toBe(Math.ceil(200 * 1.25) + 2);
    for (let i = 0; i < 40; i++) a.observe(2);
    expect(a.ms).toBe(5); // the floor
  });
});

describe('key modes', () => {
  it('decides per mode from the holder', () => {
    expect(decideKey('unfinished', null, false)).toEqual({ kind: 'create' });
    expect(decideKey('unfinished', { id: 1, state: 'running' }, false)).toEqual({ kind: 'existing', id: 1 });
    expect(decideKey('unfinished', { id: 1, state: 'done' }, false)).toEqual({ kind: 'create' });
    expect(decideKey('debounce', { id: 2, state: 'ready' }, false)).toEqual({ kind: 'debounce', id: 2 });
    expect(decideKey('debounce', { id: 2, state: 'running' }, false)).toEqual({ kind: 'create' });
    expect(decideKey('throttle', { id: 3, state: 'done' }, true)).toEqual({ kind: 'existing', id: 3 });
    expect(decideKey('throttle', { id: 3, state: 'ready' }, false)).toEqual({ kind: 'create' });
  });
});
