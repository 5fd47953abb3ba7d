import { isTimerMs, MAX_TIMER_MS } from '../../lib/options/timer-ms';

describe('isTimerMs', () => {
  it('accepts integers from min to 2^31 - 1 ms, and nothing else', () => {
    expect(MAX_TIMER_MS).toBe(2 ** 31 - 1);
    for (const ok of [0, 1, 30_000, MAX_TIMER_MS]) expect(isTimerMs(ok)).toBe(true);
    for (const bad of [-1, 0.5, NaN, Infinity, MAX_TIMER_MS + 1, 30 * 24 * 3_600_000, '100', null, undefined]) expect(isTimerMs(bad)).toBe(false);
    expect(isTimerMs(0, 1)).toBe(false);
    expect(isTimerMs(1, 1)).toBe(true);
  });
});
