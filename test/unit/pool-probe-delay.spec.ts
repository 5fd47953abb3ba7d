import { FIRST_PROBE_MS, MAX_PROBE_MS, STEP_PROBE_MS, poolProbeDelayMs } from '../../lib/database/pool-probe-delay';

describe('poolProbeDelayMs', () => {
  it('waits FIRST_PROBE_MS after the pool was lowered, doubling with each refusal up to MAX_PROBE_MS', () => {
    const mid = 0.5; // no spread
    expect([0, 1, 2, 3, 4, 5, 6, 40].map((n) => poolProbeDelayMs(n, false, mid))).toEqual([
      FIRST_PROBE_MS,
      2 * FIRST_PROBE_MS,
      4 * FIRST_PROBE_MS,
      8 * FIRST_PROBE_MS,
      16 * FIRST_PROBE_MS,
      MAX_PROBE_MS,
      MAX_PROBE_MS,
      MAX_PROBE_MS,
    ]);
  });

  it('steps up quickly after an accepted probe, whatever came before', () => {
    expect(poolProbeDelayMs(0, true, 0.5)).toBe(STEP_PROBE_MS);
    expect(poolProbeDelayMs(9, true, 0.5)).toBe(STEP_PROBE_MS);
  });

  it('spreads each wait by ±25% so that replicas lowered together do not probe in step', () => {
    expect(poolProbeDelayMs(0, false, 0)).toBe(0.75 * FIRST_PROBE_MS);
    expect(poolProbeDelayMs(0, false, 0.999999)).toBe(1.25 * FIRST_PROBE_MS);
    expect(poolProbeDelayMs(10, false, 0.999999)).toBe(1.25 * MAX_PROBE_MS);
    const spread = new Set(Array.from({ length: 50 }, () => poolProbeDelayMs(2, false)));
    expect(spread.size).toBeGreaterThan(1);
    for (const ms of spread) expect(ms).toBeGreaterThanOrEqual(0.75 * 4 * FIRST_PROBE_MS);
  });
});
