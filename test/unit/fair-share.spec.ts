import { fairShare, largestRemainder, newFairShareState, type GroupDemand } from '../../lib/scheduler/fair-share';

/** A deterministic PRNG, so the simulations are reproducible. */
function rng(seed: number): () => number {
  return () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
}

describe('largestRemainder', () => {
  it.each([
    [10, [3, 1], 0, [8, 2]],
    [4, [3, 1], 1, [3, 1]],
    [2, [3, 1], 1, [1, 1]],
    [7, [1, 1, 1], 0, [3, 2, 2]],
    [5, [5, 3, 2], 1, [3, 1, 1]],
    [3, [8, 1, 1], 1, [1, 1, 1]],
    [10, [3, 1, 1], 1, [6, 2, 2]],
    [0, [1, 2], 0, [0, 0]],
  ])('%i slots by %j (min %i) → %j', (total, weights, min, expected) => {
    const out = largestRemainder(total, weights, min);
    expect(out).toEqual(expected);
    expect(out.reduce((a, b) => a + b, 0)).toBe(Math.max(total, min * weights.length));
  });
});

describe('fairShare', () => {
  it('fills an idle process by weight, at least one slot per group', () => {
    const groups: GroupDemand[] = [
      { group: 'a', weight: 3, inFlight: 0 },
      { group: 'b', weight: 1, inFlight: 0 },
      { group: 'c', weight: 1, inFlight: 0 },
    ];
    const alloc = fairShare(groups, 10, 10, newFairShareState());
    expect(Object.fromEntries(alloc)).toEqual({ a: 6, b: 2, c: 2 });
  });

  it('gives a freed slot to the group furthest below its share', () => {
    const alloc = fairShare(
      [
        { group: 'a', weight: 3, inFlight: 3 },
        { group: 'b', weight: 1, inFlight: 0 },
      ],
      4,
      1,
      newFairShareState(),
    );
    expect(Object.fromEntries(alloc)).toEqual({ b: 1 });
  });

  it('does not starve a one-job group behind a huge one', () => {
    const alloc = fairShare(
      [
        { group: 'huge', weight: 1, inFlight: 4 },
        { group: 'tiny', weight: 1, inFlight: 0 },
      ],
      4,
      1,
      newFairShareState(),
    );
    expect(alloc.get('tiny')).toBe(1);
  });

  /** Jobs of random length finish one at a time; each freed slot is allocated again. */
  function simulate(weights: Record<string, number>, capacity: number, steps: number): Record<string, number> {
    const random = rng(42);
    const state = newFairShareState();
    const running: string[] = [];
    const held: Record<string, number> = Object.fromEntries(Object.keys(weights).map((g) => [g, 0]));
    for (let step = 0; step < steps; step++) {
      const inFlight = (g: string) => running.filter((r) => r === g).length;
      const groups = Object.entries(weights).map(([group, weight]) => ({ group, weight, inFlight: inFlight(group) }));
      for (const [g, n] of fairShare(groups, capacity, capacity - running.length, state)) for (let i = 0; i < n; i++) running.push(g);
      running.forEach((g) => held[g]++); // slot-time held this step
      running.splice(Math.floor(random() * running.length), 1); // a random job finishes
    }
    return held;
  }

  it('holds 3:1 of the slots over a saturated run (concurrency 4)', () => {
    const held = simulate({ a: 3, b: 1 }, 4, 20_000);
    expect(held.a / held.b).toBeGreaterThan(3 * 0.85);
    expect(held.a / held.b).toBeLessThan(3 * 1.15);
  });

  it('rotates scarce slots by weight when groups outnumber slots', () => {
    const weights: Record<string, number> = { a: 1, b: 1, c: 2, d: 1, e: 1, f: 2 };
    const held = simulate(weights, 2, 40_000);
    const perWeight = Object.entries(held).map(([g, n]) => n / weights[g]);
    const mean = perWeight.reduce((a, b) => a + b, 0) / perWeight.length;
    for (const share of perWeight) expect(Math.abs(share - mean) / mean).toBeLessThan(0.1);
  });

  it('serves every group within a few ticks when slots are scarce', () => {
    const state = newFairShareState();
    const groups = Array.from({ length: 50 }, (_, i) => ({ group: `g${i}`, weight: 1, inFlight: 0 }));
    const seen = new Set<string>();
    for (let tick = 0; tick < 50; tick++) for (const g of fairShare(groups, 1, 1, state).keys()) seen.add(g);
    expect(seen.size).toBe(50);
  });

  it('hands out exactly the free slots', () => {
    const state = newFairShareState();
    for (const free of [1, 2, 3, 7]) {
      const alloc = fairShare([{ group: 'a', weight: 2, inFlight: 0 }, { group: 'b', weight: 5, inFlight: 1 }], 8, free, state);
      expect([...alloc.values()].reduce((a, b) => a + b, 0)).toBe(free);
    }
    expect(fairShare([], 8, 3, state).size).toBe(0);
  });
});
