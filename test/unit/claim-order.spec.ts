import { compareDue, inClaimOrder } from '../../lib/claim/claimed-job';

describe('inClaimOrder', () => {
  it('puts higher priority first, then the older id, across types and groups alike', () => {
    const jobs = [
      { id: 5, priority: 0 },
      { id: 9, priority: 5 },
      { id: 2, priority: 0 },
      { id: 7, priority: 5 },
      { id: 1, priority: -3 },
    ];
    expect([...jobs].sort(inClaimOrder).map((j) => j.id)).toEqual([7, 9, 2, 5, 1]);
  });

  it('among equal priorities takes the job due first, then the older id, in each driver form of run_after', () => {
    const forms: Array<(ms: number) => unknown> = [
      (ms) => ms, // PostgreSQL's claim functions: epoch ms
      (ms) => new Date(ms), // pg and mysql2 otherwise
      (ms) => new Date(ms).toISOString().replace('T', ' ').replace('Z', ''), // SQLite's text
    ];
    const t = Date.UTC(2026, 11, 3, 9, 59, 59, 990);
    for (const form of forms) {
      const jobs = [
        { id: 1, priority: 0, readyAt: form(t + 20) },
        { id: 2, priority: 0, readyAt: form(t + 10) },
        { id: 3, priority: 0, readyAt: form(t + 10) },
        { id: 4, priority: 1, readyAt: form(t + 99) },
        { id: 5, priority: 0, readyAt: form(t) },
      ];
      expect([...jobs].sort(inClaimOrder).map((j) => j.id)).toEqual([4, 5, 2, 3, 1]);
    }
  });
});

describe('compareDue', () => {
  it('compares text without parsing it: the fixed-width form sorts as time does, across a second and a day', () => {
    expect(compareDue('2026-12-03 09:59:59.990', '2026-12-03 10:00:00.000')).toBeLessThan(0);
    expect(compareDue('2026-12-04 00:00:00.000', '2026-12-03 23:59:59.999')).toBeGreaterThan(0);
    expect(compareDue('2026-12-03 10:00:00.000', '2026-12-03 10:00:00.000')).toBe(0);
  });

  it('treats values of different kinds, or missing ones, as equal (the id decides)', () => {
    expect(compareDue(5, new Date(1))).toBe(0);
    expect(compareDue(undefined, 3)).toBe(0);
    expect(compareDue(null, null)).toBe(0);
  });
});
