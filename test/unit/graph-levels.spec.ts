import { reachedLevels, type ReachRow } from '../../lib/query/graph-levels';

const row = (id: number, prev: number, depth: number, budget: number, deg: number): ReachRow => ({ id, prev, depth, budget, deg });

describe('reachedLevels', () => {
  it('a chain walked to its end: every level, and the walk is over', () => {
    // 10 ← 11 → 12 → 13 (end), from 11 with budget 10.
    const rows = [row(11, 0, 0, 10, 2), row(10, 11, 1, 9, 1), row(12, 11, 1, 9, 2), row(13, 12, 2, 8, 1)];
    const r = reachedLevels(rows, new Set([11]), 11, 500, 500);
    expect(r.levels).toEqual([[10, 12], [13]]);
    expect(r.ends).toBe(true);
  });

  it('stops after the level whose jobs were not all walked on, and reports them for the next statement', () => {
    // 2's share (1) is not above its 3 neighbours: level 2 is complete, level 3 is not.
    const rows = [row(1, 0, 0, 4, 1), row(2, 1, 1, 3, 2), row(3, 2, 2, 2, 5), row(4, 3, 3, 1, 1)];
    const r = reachedLevels(rows, new Set([1]), 1, 500, 500);
    expect(r.levels).toEqual([[2], [3]]);
    expect(r.ends).toBe(false);
    expect(r.known).toEqual(new Map([[3, { prev: 2, deg: 5 }]]));
  });

  it('nothing when a seed was not walked on (a hub beyond the budget): the caller takes a round', () => {
    expect(reachedLevels([row(1, 0, 0, 64, 5_000)], new Set([1]), 1, 500, 500)).toEqual({ levels: [], ends: false, known: new Map() });
    expect(reachedLevels([], new Set([1]), 1, 500, 500).levels).toEqual([]);
  });

  it('the deepest level is not complete when its rows had budget and neighbours but nothing below them (a cut recursion)', () => {
    const rows = [row(1, 0, 0, 100, 1), row(2, 1, 1, 99, 2), row(3, 2, 2, 98, 2)];
    const r = reachedLevels(rows, new Set([1]), 1, 500, 500);
    expect(r.levels).toEqual([[2], [3]]);
    expect(r.ends).toBe(false);
  });

  it('the depth limit: its level is kept, the next one left to the next statement', () => {
    const rows = [row(1, 0, 0, 100, 1), row(2, 1, 1, 99, 2), row(3, 2, 2, 98, 2)];
    expect(reachedLevels(rows, new Set([1]), 1, 500, 2)).toMatchObject({ levels: [[2], [3]], ends: false });
  });

  it('jobs already seen are not new, a job keeps its fewest hops, and a level is ordered by distance of id to the root, then id', () => {
    // From 50 (seen: 49, its way in): 49 again at depth 1, 52 at depths 1 and 3, 47 and 53 at depth 2.
    const rows = [
      row(50, 49, 0, 100, 3),
      row(49, 50, 1, 49, 1),
      row(52, 50, 1, 49, 3),
      row(53, 52, 2, 24, 1),
      row(47, 52, 2, 24, 1),
      row(52, 53, 3, 23, 3),
    ];
    const r = reachedLevels(rows, new Set([49, 50]), 50, 500, 500);
    expect(r.levels).toEqual([[52], [47, 53]]); // 47 and 53 are as far from 50: the lower id first
    expect(r.ends).toBe(true);
  });

  it('stops after a level wider than one round takes: the next one’s order depends on the round’s slices', () => {
    const rows = [row(1, 0, 0, 100, 3), row(2, 1, 1, 33, 2), row(3, 1, 1, 33, 1), row(4, 1, 1, 33, 1), row(5, 2, 2, 32, 1)];
    expect(reachedLevels(rows, new Set([1]), 1, 2, 500)).toMatchObject({ levels: [[2, 3, 4]], ends: false });
    expect(reachedLevels(rows, new Set([1]), 1, 3, 500)).toMatchObject({ levels: [[2, 3, 4], [5]], ends: true });
  });
});
