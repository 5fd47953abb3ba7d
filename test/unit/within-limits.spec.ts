import { withinLimits } from '../../lib/claim/within-limits';
import { retryDelayMs } from '../../lib/scheduler/retry-backoff';

describe('withinLimits', () => {
  const c = (id: number, group: string, type: string) => ({ id, group, type });
  const candidates = [c(1, 'a', 'x'), c(2, 'a', 'y'), c(3, 'b', 'x'), c(4, 'b', 'y'), c(5, 'a', 'x')];

  it('keeps everything without limits', () => {
    expect(withinLimits(candidates, {})).toHaveLength(5);
  });

  it('applies global, group and type room together, in order', () => {
    expect(withinLimits(candidates, { total: 2 }).map((x) => x.id)).toEqual([1, 2]);
    expect(withinLimits(candidates, { groups: { a: 1 } }).map((x) => x.id)).toEqual([1, 3, 4]);
    expect(withinLimits(candidates, { types: { x: 1 }, groups: { b: 1 } }).map((x) => x.id)).toEqual([1, 2, 4]);
    expect(withinLimits(candidates, { total: 3, types: { y: 0 } }).map((x) => x.id)).toEqual([1, 3, 5]);
  });
});

describe('retryDelayMs', () => {
  const backoff = { baseMs: 1_000, maxMs: 60_000, factor: 2 };
  it('grows exponentially under a cap, with full jitter', () => {
    expect(retryDelayMs(1, backoff, () => 0.999)).toBe(999);
    expect(retryDelayMs(3, backoff, () => 0.5)).toBe(2_000);
    expect(retryDelayMs(30, backoff, () => 0.5)).toBe(30_000);
    expect(retryDelayMs(2, backoff, () => 0)).toBe(0);
  });
});
