import { planRotation, type RotationCursor, type RotationGroup } from '../../lib/claim/rotation-plan';

const groups = (n: number, weight = 1): RotationGroup[] => Array.from({ length: n }, (_, i) => ({ group: `g${String(i).padStart(5, '0')}`, weight }));

/** Runs rounds of claims over groups in index order, wrapping, as the claim does with the cursor. */
function simulate(all: RotationGroup[], free: number, ticks: number): Map<string, number> {
  const got = new Map<string, number>();
  const index = new Map(all.map((g, i) => [g.group, i]));
  let cursor: RotationCursor = { group: '', served: 0 };
  for (let t = 0; t < ticks; t++) {
    const from = index.get(cursor.group) ?? 0; // every group stays backlogged
    const ordered = Array.from({ length: Math.min(free + 1, all.length) }, (_, k) => all[(from + k) % all.length]);
    const plan = planRotation(ordered, cursor, free);
    for (const q of plan.quotas) got.set(q.group!, (got.get(q.group!) ?? 0) + q.limit);
    cursor = plan.cursor;
  }
  return got;
}

describe('planRotation (weighted round-robin from a shared cursor)', () => {
  it('gives one slot per equal-weight group and moves the cursor to the last one served', () => {
    const plan = planRotation(groups(5), { group: '', served: 0 }, 3);
    expect(plan.quotas).toEqual([{ group: 'g00000', limit: 1 }, { group: 'g00001', limit: 1 }, { group: 'g00002', limit: 1 }]);
    expect(plan.cursor).toEqual({ group: 'g00002', served: 1 });
  });

  it('passes over the cursor group once its visit is complete', () => {
    const plan = planRotation(groups(5).slice(2), { group: 'g00002', served: 1 }, 2);
    expect(plan.quotas.map((q) => q.group)).toEqual(['g00003', 'g00004']);
  });

  it('starts a new visit of a lone group whose visit is complete, and goes on visiting it while slots are left', () => {
    const plan = planRotation([{ group: 'a', weight: 1 }], { group: 'a', served: 1 }, 10);
    expect(plan.quotas).toEqual([{ group: 'a', limit: 10 }]);
    expect(plan.cursor).toEqual({ group: 'a', served: 1 });
    const heavy = planRotation([{ group: 'a', weight: 3 }], { group: 'a', served: 3 }, 2);
    expect(heavy.quotas).toEqual([{ group: 'a', limit: 2 }]);
    expect(heavy.cursor).toEqual({ group: 'a', served: 2 });
  });

  it('fills every slot from a lone group mid-visit (per-group caps claim one group through the rotation)', () => {
    const plan = planRotation([{ group: 'a', weight: 1 }], { group: '', served: 0 }, 20);
    expect(plan.quotas).toEqual([{ group: 'a', limit: 20 }]);
    expect(plan.cursor).toEqual({ group: 'a', served: 1 });
  });

  it('goes round again, the completed cursor group first, when slots are left after every group', () => {
    const list: RotationGroup[] = [{ group: 'a', weight: 1 }, { group: 'b', weight: 1 }];
    const plan = planRotation(list, { group: 'a', served: 1 }, 5);
    // b (the rest of the round), then a, b, a, b: the order successive claims would take.
    expect(plan.quotas).toEqual([{ group: 'b', limit: 3 }, { group: 'a', limit: 2 }]);
    expect(plan.cursor).toEqual({ group: 'b', served: 1 });
    // No slot left after the others: the cursor's group waits for the next round.
    expect(planRotation(list, { group: 'a', served: 1 }, 1).quotas).toEqual([{ group: 'b', limit: 1 }]);
  });

  it('keeps weights over the extra rounds', () => {
    const list: RotationGroup[] = [{ group: 'a', weight: 1 }, { group: 'b', weight: 3 }];
    const plan = planRotation(list, { group: '', served: 0 }, 12);
    expect(plan.quotas).toEqual([{ group: 'a', limit: 3 }, { group: 'b', limit: 9 }]);
    expect(plan.cursor).toEqual({ group: 'b', served: 3 });
    const partial = planRotation(list, { group: '', served: 0 }, 6);
    expect(partial.quotas).toEqual([{ group: 'a', limit: 2 }, { group: 'b', limit: 4 }]);
    expect(partial.cursor).toEqual({ group: 'b', served: 1 });
  });

  it('continues a heavy group where the last claim left it', () => {
    const list: RotationGroup[] = [{ group: 'a', weight: 10 }, { group: 'b', weight: 1 }];
    const first = planRotation(list, { group: '', served: 0 }, 4);
    expect(first.quotas).toEqual([{ group: 'a', limit: 4 }]);
    const second = planRotation(list, first.cursor, 7);
    expect(second.quotas).toEqual([{ group: 'a', limit: 6 }, { group: 'b', limit: 1 }]);
    expect(second.cursor).toEqual({ group: 'b', served: 1 });
    // Three slots more: a new round, a's visit first.
    const third = planRotation(list, first.cursor, 10);
    expect(third.quotas).toEqual([{ group: 'a', limit: 9 }, { group: 'b', limit: 1 }]);
    expect(third.cursor).toEqual({ group: 'a', served: 3 });
  });

  it('counts a group met again after the walk wrapped round once, then shares the rest round by round', () => {
    const list: RotationGroup[] = [{ group: 'a', weight: 1 }, { group: 'b', weight: 1 }, { group: 'a', weight: 1 }];
    expect(planRotation(list, { group: '', served: 0 }, 5).quotas).toEqual([{ group: 'a', limit: 3 }, { group: 'b', limit: 2 }]);
  });

  it('serves every one of 100,000 groups once before any twice, 10 slots at a time', () => {
    const all = groups(100_000);
    const got = simulate(all, 10, 10_000);
    expect(got.size).toBe(100_000);
    expect(Math.max(...got.values())).toBe(1);
  });

  it('holds weights: two groups of weight 10 among 1,000 of weight 1 get 10x the slots per round', () => {
    const all = groups(1_000);
    all[17].weight = 10;
    all[500].weight = 10;
    const got = simulate(all, 6, (1_018 * 3) / 6); // exactly three rounds of 1,018 slots
    expect(got.get(all[17].group)).toBe(30);
    expect(got.get(all[500].group)).toBe(30);
    expect(got.get(all[3].group)).toBe(3);
  });
});
