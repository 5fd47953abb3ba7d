import { countFinished, EMPTY_SAMPLE, evenStrata, MINUTE_MS, minuteStarts, minuteStrata, type StratumSample } from '../../lib/stats/finished-strata';

describe('finished jobs counted from bounded reads of stretches', () => {
  const start = Date.UTC(2026, 11, 4, 12, 0);
  const STRETCH = MINUTE_MS / 12;
  const sample = (s: Partial<StratumSample>): StratumSample => ({ ...EMPTY_SAMPLE, ...s });
  const one = (s: StratumSample, until = start + STRETCH) => countFinished([s], [{ from: start, to: start + STRETCH }], until, 500);

  it('lists whole minutes up to the one holding now, and cuts spans into twelve stretches', () => {
    expect(minuteStarts(new Date(start + 59_999), 3)).toEqual([start - 2 * MINUTE_MS, start - MINUTE_MS, start]);
    expect(minuteStrata(start, start + MINUTE_MS)).toHaveLength(12);
    expect(minuteStrata(start, start + STRETCH + 1)).toEqual([{ from: start, to: start + STRETCH }, { from: start + STRETCH, to: start + 2 * STRETCH }]);
    const week = evenStrata(start, start + 7 * 86_400_000, 60);
    expect(week).toHaveLength(60);
    expect(week[59].to).toBe(start + 7 * 86_400_000);
    expect(evenStrata(start, start + 5, 12)).toHaveLength(5); // never empty stretches
  });

  it('counts a stretch exactly when the read did not reach its cap, with the mean duration', () => {
    expect(one(sample({ done: 100, failed: 20, rows: 499, last: new Date(start + 4_000), doneMs: 5_000, timed: 100 }))).toEqual({ done: 100, failed: 20, estimated: false, meanDurationMs: 50 });
    expect(one(EMPTY_SAMPLE)).toEqual({ done: 0, failed: 0, estimated: false, meanDurationMs: null });
  });

  it('extrapolates a capped read over the part of the stretch it covered, keeping the mix', () => {
    // 500 rows in the first second: 2,500 over the five seconds.
    const capped = sample({ done: 450, failed: 50, rows: 500, last: new Date(start + 999), doneMs: 4_500, timed: 450 });
    expect(one(capped)).toEqual({ done: 2_250, failed: 250, estimated: true, meanDurationMs: 10 });
  });

  it('does not scale up a capped read that covered its whole stretch', () => {
    expect(one(sample({ done: 500, rows: 500, last: new Date(start + STRETCH - 1) }))).toMatchObject({ done: 500, estimated: false });
  });

  it('counts cancelled rows against the cap but not as done or failed', () => {
    expect(one(sample({ done: 10, rows: 500, last: new Date(start + 2_499) }))).toMatchObject({ done: 20, failed: 0, estimated: true });
  });

  it('sums the stretches; a burst in one skews only that one, and the mean weighs each by its estimate', () => {
    const stretches = minuteStrata(start, start + MINUTE_MS);
    const quiet = sample({ done: 40, failed: 2, rows: 42, last: new Date(start), doneMs: 40 * 100, timed: 40 });
    // Stretch 3: a cancelled graph's 100,000 rows at one instant, 2 s in: the 10 done before it read, then 490 cancelled.
    const burst = sample({ done: 10, rows: 500, last: new Date(start + 3 * STRETCH + 1_999), doneMs: 10 * 1_000, timed: 10 });
    const samples = stretches.map((_, i) => (i === 3 ? burst : quiet));
    const mean = Math.round((11 * 40 * 100 + 25 * 1_000) / (11 * 40 + 25));
    expect(countFinished(samples, stretches, start + MINUTE_MS, 500)).toEqual({ done: 11 * 40 + 25, failed: 22, estimated: true, meanDurationMs: mean });
  });

  it('extrapolates the span in progress only up to now', () => {
    const full = sample({ done: 500, rows: 500, last: new Date(start + 999) });
    // 7.5 s into the minute: stretch 0 whole (5 s), stretch 1 up to now (2.5 s).
    const stretches = minuteStrata(start, start + 7_500);
    const samples = [full, { ...full, last: new Date(start + STRETCH + 499) }];
    expect(countFinished(samples, stretches, start + 7_500, 500)).toMatchObject({ done: 2_500 + 2_500, failed: 0, estimated: true });
  });
});
