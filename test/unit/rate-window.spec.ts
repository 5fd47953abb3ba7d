import { decideKey } from '../../lib/enqueue/key-mode';
import {
  GUARD_BUCKETS,
  admission,
  claimAgainInMs,
  currentCounts,
  lookaheadMs,
  decodeCounts,
  decodeWindow,
  encodeCounts,
  rateGeometry,
  rateRoom,
  recordClaims,
  reopensInMs,
  windowAt,
  type RateWindowState,
} from '../../lib/rate-limit/rate-window';

describe('rate windows', () => {
  const rule = { limit: 20, intervalMs: 1_000 };
  const g = rateGeometry(rule);
  const empty: RateWindowState = { head: 0, counts: [] };

  it('cuts the interval into 10 ms buckets and counts a guard beyond it', () => {
    expect(g).toEqual({ width: 10, span: 100 + 1 + GUARD_BUCKETS });
    expect(rateGeometry({ limit: 1, intervalMs: 30 })).toEqual({ width: 1, span: 31 + GUARD_BUCKETS });
    expect(rateGeometry({ limit: 1, intervalMs: 60_000 }).width).toBe(600);
  });

  it('admits up to the limit, then reopens when the oldest claims leave the window', () => {
    const t0 = 1_000_000;
    expect(rateRoom(rule, currentCounts(empty, t0, g).counts)).toBe(20);
    let state = recordClaims(empty, t0, 15, g);
    state = recordClaims(state, t0 + 500, 5, g);
    expect(rateRoom(rule, currentCounts(state, t0 + 600, g).counts)).toBe(0);
    // The 15 claims of bucket t0 leave once the current bucket is span buckets later.
    const reopen = reopensInMs(rule, state, t0 + 600, g);
    expect(reopen).toBe(t0 + g.span * g.width - (t0 + 600));
    expect(rateRoom(rule, currentCounts(state, t0 + 600 + reopen - 1, g).counts)).toBe(0);
    expect(rateRoom(rule, currentCounts(state, t0 + 600 + reopen, g).counts)).toBe(15);
    expect(reopensInMs(rule, state, t0 + 600 + reopen, g)).toBe(0);
  });

  it('never admits more than the limit in any sliding interval (simulated greedy claimers with jittered clocks)', () => {
    let state = empty;
    const claims: number[] = [];
    let t = 5_000;
    for (let step = 0; step < 5_000; step++) {
      t += 1 + ((step * 7919) % 13);
      const room = rateRoom(rule, currentCounts(state, t, g).counts);
      const take = Math.min(room, 1 + (step % 4));
      if (take > 0) {
        state = recordClaims(state, t, take, g);
        for (let i = 0; i < take; i++) claims.push(t);
      }
    }
    let worst = 0;
    for (let i = 0, j = 0; i < claims.length; i++) {
      while (j < claims.length && claims[j] < claims[i] + rule.intervalMs + GUARD_BUCKETS * g.width) j++;
      worst = Math.max(worst, j - i);
    }
    expect(worst).toBeLessThanOrEqual(20);
    // And the rate stays close to the limit: at least the interval's share of the counted span.
    const rate = (claims.length / (claims[claims.length - 1] - claims[0])) * 1_000;
    expect(rate).toBeGreaterThan(20 * 0.9);
  });

  it('admits ahead of a reopening within the lookahead, dated at the reopening, never before the head', () => {
    const t0 = 2_000_000;
    const ahead = lookaheadMs(rule);
    expect(ahead).toBe(200);
    expect(lookaheadMs({ limit: 2, intervalMs: 100 })).toBe(20);
    expect(lookaheadMs({ limit: 2, intervalMs: 60_000 })).toBe(200);
    // Room now: admitted now.
    expect(admission(rule, empty, t0, g, ahead)).toEqual({ atMs: t0, room: 20 });
    const full = recordClaims(empty, t0, 20, g);
    const reopen = t0 + reopensInMs(rule, full, t0, g);
    // Full, reopening beyond the lookahead: nothing, and claim again a lookahead before it.
    expect(admission(rule, full, t0 + 100, g, ahead)).toEqual({ atMs: t0 + 100, room: 0 });
    expect(claimAgainInMs(rule, full, t0 + 100, g, ahead)).toBe(reopen - ahead - (t0 + 100));
    // Within the lookahead: the whole room, at the reopening.
    const early = reopen - 150;
    expect(admission(rule, full, early, g, ahead)).toEqual({ atMs: reopen, room: 20 });
    // Recorded there, the window's head is ahead of the clock: a later claimer is admitted no earlier.
    const afterAhead = recordClaims(full, reopen, 5, g);
    expect(admission(rule, afterAhead, early + 10, g, ahead)).toEqual({ atMs: afterAhead.head * g.width, room: 15 });
    expect(afterAhead.head * g.width).toBeGreaterThan(early + 10);
    expect(claimAgainInMs(rule, afterAhead, early + 10, g, ahead)).toBeUndefined();
  });

  it('with the lookahead, greedy claimers that claim late still hold the limit in every window of starts and reach the guard-bound rate', () => {
    const ahead = lookaheadMs(rule);
    let state = empty;
    const startsAt: number[] = [];
    let t = 10_000;
    for (let step = 0; step < 400; step++) {
      const a = admission(rule, state, t, g, ahead);
      if (a.room > 0) {
        state = recordClaims(state, a.atMs, a.room, g);
        for (let i = 0; i < a.room; i++) startsAt.push(a.atMs);
      }
      // Each wake-up comes 0-150 ms late (a loaded machine), the claim itself takes 30 ms.
      const again = claimAgainInMs(rule, state, t, g, ahead) ?? 1;
      t += again + ((step * 7919) % 151) + 30;
    }
    let worst = 0;
    for (let i = 0, j = 0; i < startsAt.length; i++) {
      while (j < startsAt.length && startsAt[j] < startsAt[i] + rule.intervalMs + GUARD_BUCKETS * g.width) j++;
      worst = Math.max(worst, j - i);
    }
    expect(worst).toBeLessThanOrEqual(20);
    const rate = ((startsAt.length - 20) / (startsAt[startsAt.length - 1] - startsAt[0])) * 1_000;
    // The guard bounds the rate at 20 per 1,070 ms (93.5%); lateness below the lookahead costs nothing.
    expect(rate).toBeGreaterThan(20 / 1.071);
  });

  it('drops buckets that fell out of the window, keeps a head a clock step left behind', () => {
    const state = recordClaims(empty, 10_000, 3, g);
    expect(currentCounts(state, 10_000 + 2_000, g).counts.reduce((a, b) => a + b, 0)).toBe(0);
    expect(currentCounts(state, 9_990, g).head).toBe(state.head);
    expect(decodeCounts(encodeCounts([0, 3, 0, 1]))).toEqual([0, 3, 0, 1]);
    expect(decodeCounts('')).toEqual([]);
  });

  it('stores the bucket width with the counts, and reads rows written without it', () => {
    expect(decodeWindow(encodeCounts([0, 3], 600))).toEqual({ counts: [0, 3], width: 600 });
    expect(decodeWindow(encodeCounts([], 33.33))).toEqual({ counts: [], width: 33.33 });
    expect(decodeWindow('2,1')).toEqual({ counts: [2, 1] });
  });

  it('moves a window counted in another width onto this one by time, counts kept', () => {
    const t = 1_764_000_000_000;
    const minute = { limit: 5, intervalMs: 60_000 };
    const gm = rateGeometry(minute);
    // 3 claims in 10 ms buckets (1 s interval), then read as a 5-a-minute limit 200 ms later.
    const fast = recordClaims(empty, t, 3, g);
    const moved = windowAt(fast, t + 200, minute, gm);
    expect(moved.width).toBe(600);
    expect(admission(minute, moved, t + 200, gm, lookaheadMs(minute))).toEqual({ atMs: t + 200, room: 2 });
    // And back: the minute's claims still count in 10 ms buckets until they leave a second's window.
    const slow = recordClaims(empty, t, 20, gm);
    expect(rateRoom(rule, currentCounts(windowAt(slow, t + 100, rule, g), t + 100, g).counts)).toBe(0);
    expect(rateRoom(rule, currentCounts(windowAt(slow, t + 2_000, rule, g), t + 2_000, g).counts)).toBe(20);
  });

  it('brings a head far ahead of the clock back to now, its counts kept', () => {
    const t = 1_764_000_000_000;
    const legacy: RateWindowState = { head: t, counts: [1, 1, 1] }; // 1 ms buckets, no width stored
    const healed = windowAt(legacy, t, rule, g);
    expect(healed.head).toBe(Math.floor(t / g.width));
    expect(admission(rule, healed, t, g, lookaheadMs(rule))).toEqual({ atMs: t, room: 17 });
    // A head the lookahead put ahead is left as it is.
    const ahead = recordClaims(empty, t + lookaheadMs(rule), 20, g);
    expect(windowAt(ahead, t, rule, g).head).toBe(ahead.head);
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
