import { widestFan } from '../../dashboard-ui/widest-fan';

describe('widestFan (the graph page merges the edges of a wide fan)', () => {
  it('is 0 without edges and 1 for a chain', () => {
    expect(widestFan([])).toBe(0);
    expect(widestFan([{ from: 1, to: 2 }, { from: 2, to: 3 }])).toBe(1);
  });

  it('counts the edges leaving one job', () => {
    const fanOut = Array.from({ length: 998 }, (_, i) => ({ from: 1, to: i + 2 }));
    expect(widestFan(fanOut)).toBe(998);
  });

  it('counts the edges entering one job, apart from those leaving it', () => {
    // 3 → 7 ← 4, 5, 6 and 7 → 8, 9: in 4, out 2; job 3 leaves twice (→ 7, → 9).
    const edges = [3, 4, 5, 6].map((from) => ({ from, to: 7 })).concat([{ from: 7, to: 8 }, { from: 7, to: 9 }, { from: 3, to: 9 }]);
    expect(widestFan(edges)).toBe(4);
  });

  it('does not mix up a job that is the source of one edge and the target of another', () => {
    // Each job has one edge in and one out: a degree counted by job id alone would say 2.
    expect(widestFan([{ from: 1, to: 2 }, { from: 2, to: 1 }])).toBe(1);
  });
});
