import type { JobView } from '../../lib';
import { slotShares } from '../../sample-app/demo/slot-shares';

const job = (group: string, startedAtMs: number | null): JobView => ({ group, startedAt: startedAtMs === null ? null : new Date(startedAtMs) }) as JobView;

describe('demo slot shares', () => {
  it('counts starts per tenant until the first tenant has started its last load job', () => {
    // acme (weight 3) starts 3 jobs per tick, globex 1, until acme's load is all started at t=3.
    const load = [
      ...[1, 1, 1, 2, 2, 2, 3, 3, 3].map((t) => job('acme', t)),
      ...[1, 2, 3, 4, 4, 4, 5].map((t) => job('globex', t)),
    ];
    const steps = [job('acme', 2), job('globex', 6), job('acme', null)];
    expect(slotShares(load, [...load, ...steps], { acme: 3, globex: 1 })).toEqual([
      { tenant: 'acme', weight: 3, started: 10, share: 10 / 13, expected: 0.75 },
      { tenant: 'globex', weight: 1, started: 3, share: 3 / 13, expected: 0.25 },
    ]);
  });

  it('says nothing while every tenant still has load that never started', () => {
    expect(slotShares([job('acme', 1), job('acme', null), job('globex', null)], [], { acme: 3 })).toEqual([]);
  });
});
