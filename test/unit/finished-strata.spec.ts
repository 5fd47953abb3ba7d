import { countFinished, EMPTY_SAMPLE, evenStrata, MINUTE_MS, minuteStarts, minuteStrata, type StratumSample } from '../../lib/dashboard/finished-strata';

describe('finished jobs counted from bounded reads of stretches', () => {
  const start = Date.UTC(2026, 11, 4, 12, 0);
  const STRETCH = MINUTE_MS / 4;
  const sample = (s: Partial<StratumSample>): StratumSample => ({ ...EMPTY_SAMPLE, ...s });
  const one = (s: StratumSample, until = start + STRETCH) => countFinished([s], [{ from: start, to: start + STRETCH }], until, 1_000);

  it('lists whole minutes up to the one holding now, and cuts spans into stretches', () => {
    expect(minuteStarts(new Date(start + 59_999), 3)).toEqual([start - 2 * MINUTE_MS, start - MINUTE_MS, start]);
    expect(minuteStrata(start, start + MINUTE_MS)).toHaveLength(4);
    expect(minuteStrata(start, start + STRETCH + 1)).toEqual([{ from: start, to: start + STRETCH }, { from: start + STRETCH, to: start + 2 * STRETCH }]);
    const week = evenStrata(start, start + 7 * 86_400_000, 20);
    expect(week).toHaveLength(20);
    expect(week[19].to).toBe(start + 7 * 86_400_000);
    expect(evenStrata(start, start + 5, 20)).toHaveLength(5); // never empty stretches
  });

  it('counts a stretch exactly when the read did not reach its cap, with the mean duration', () => {
    const quiet = sample({ done: 100, failed: 20, rows: 999, last: new Date(start + 4_000), beforeLast: 998, doneMs: 5_000, timed: 100 });
    expect(one(quiet)).toEqual({ done: 100, failed: 20, estimated: false, meanDurationMs: 50 });
    expect(one(EMPTY_SAMPLE)).toEqual({ done: 0, failed: 0, estimated: false, meanDurationMs: null });
  });

  it('extrapolates a capped read at the rate and mix of its rows before the last instant', () => {
    // Batches of 500 every 500 ms: the read took the batches at 0 and 500 ms whole (1,000 rows, 500 before the
    // last instant, over 500 ms): 1,000 a second, 15,000 over the 15 s.
    const capped = sample({ done: 900, failed: 100, rows: 1_000, first: new Date(start), last: new Date(start + 500), beforeLast: 500, doneBefore: 450, failedBefore: 50, doneMs: 9_000, timed: 900 });
    expect(one(capped)).toEqual({ done: 13_500, failed: 1_500, estimated: true, meanDurationMs: 10 });
    // The cut cluster's mix does not count: here the read took only failed ones of it.
    const cut = sample({ done: 900, failed: 100, rows: 1_000, first: new Date(start), last: new Date(start + 500), beforeLast: 900, doneBefore: 810, failedBefore: 90 });
    expect(one(cut)).toMatchObject({ done: 810 * 30, failed: 90 * 30 });
  });

  it('the rate runs from the first row read: an empty start of the stretch is known, not extrapolated', () => {
    // Nothing for 10 s, then 1,000 rows a second: the read covers 10.0-11.0 s; 5,000 over the stretch.
    const late = sample({ done: 1_000, rows: 1_000, first: new Date(start + 10_000), last: new Date(start + 11_000), beforeLast: 999, doneBefore: 999 });
    expect(one(late)).toMatchObject({ done: 4_995, estimated: true });
  });

  it('a cluster that fills the read alone gives no rate: it counts what it read, as a lower bound', () => {
    const at = new Date(start + 3_000);
    expect(one(sample({ done: 1_000, rows: 1_000, first: at, last: at, beforeLast: 0 }))).toMatchObject({ done: 1_000, estimated: true });
  });

  it('never counts fewer than it read', () => {
    // 999 rows before the last instant near the end of the stretch: the rate gives about what was read.
    const whole = sample({ done: 1_000, rows: 1_000, first: new Date(start), last: new Date(start + STRETCH - 1), beforeLast: 999, doneBefore: 999 });
    expect(one(whole).done).toBe(1_000);
  });

  it('counts cancelled rows against the cap but not as done or failed', () => {
    // 1,000 rows over 7.5 s (half the stretch), a tenth of them done: 200 done over the stretch.
    const mostlyCancelled = sample({ done: 100, rows: 1_000, first: new Date(start), last: new Date(start + 7_500), beforeLast: 999, doneBefore: 100 });
    expect(one(mostlyCancelled)).toMatchObject({ done: 200, failed: 0, estimated: true });
  });

  it('sums the stretches; a burst in one skews only that one, and the mean weighs each by its estimate', () => {
    const stretches = minuteStrata(start, start + MINUTE_MS);
    const quiet = sample({ done: 40, failed: 2, rows: 42, first: new Date(start), last: new Date(start), beforeLast: 41, doneMs: 40 * 100, timed: 40 });
    // Stretch 2: a cancelled graph's 100,000 rows at one instant, 2 s in, after 10 done ones.
    const burst = sample({ done: 10, rows: 1_000, first: new Date(start + 2 * STRETCH), last: new Date(start + 2 * STRETCH + 2_000), beforeLast: 10, doneBefore: 10, doneMs: 10 * 1_000, timed: 10 });
    const samples = stretches.map((_, i) => (i === 2 ? burst : quiet));
    // The burst's stretch: 10 rows in 2 s say 75 over the 15 s, fewer than the 1,000 read: it counts what it read.
    const got = countFinished(samples, stretches, start + MINUTE_MS, 1_000);
    expect(got).toMatchObject({ done: 3 * 40 + 10, failed: 6, estimated: true });
  });

  it('extrapolates the span in progress only up to now', () => {
    // 1,000 rows in the first second (500 before the last instant, at 500 ms): 1,000/s.
    const full = sample({ done: 1_000, rows: 1_000, first: new Date(start), last: new Date(start + 500), beforeLast: 500, doneBefore: 500 });
    // 20 s into the minute: stretch 0 whole (15 s), stretch 1 up to now (5 s).
    const stretches = minuteStrata(start, start + 20_000);
    const samples = [full, { ...full, first: new Date(start + STRETCH), last: new Date(start + STRETCH + 500) }];
    expect(countFinished(samples, stretches, start + 20_000, 1_000)).toMatchObject({ done: 15_000 + 5_000, failed: 0, estimated: true });
  });
});
