import { nearestEdges } from '../../lib/dashboard/nearest-edges';

describe('nearestEdges', () => {
  it('keeps every edge under the bound, sorted, and drops edges to nodes not shown', () => {
    const edges = [
      { from: 3, to: 4 },
      { from: 1, to: 2 },
      { from: 1, to: 99 },
    ];
    expect(nearestEdges(edges, [1, 2, 3, 4], 10)).toEqual({
      edges: [
        { from: 1, to: 2 },
        { from: 3, to: 4 },
      ],
      cut: false,
    });
  });

  it('over the bound keeps the edges whose farther end is nearest the job, then the nearer end', () => {
    // 40 upstreams × 40 dependents, every pair: 1,600 edges. The job is upstream 0; nearest
    // first are its dependents (hop 1), then the other upstreams (hop 2).
    const ups = Array.from({ length: 40 }, (_, i) => i);
    const downs = Array.from({ length: 40 }, (_, i) => 100 + i);
    const order = [0, ...downs, ...ups.slice(1)];
    const edges = ups.flatMap((from) => downs.map((to) => ({ from, to })));
    const { edges: kept, cut } = nearestEdges(edges, order, 100);
    expect(cut).toBe(true);
    expect(kept).toHaveLength(100);
    // The job's own 40 edges, then upstream 1's 40, then 20 of upstream 2's (the nearest dependents).
    expect(kept.filter((e) => e.from === 0)).toHaveLength(40);
    expect(kept.filter((e) => e.from === 1)).toHaveLength(40);
    expect(kept.filter((e) => e.from === 2).map((e) => e.to)).toEqual(downs.slice(0, 20));
    expect(kept).toEqual([...kept].sort((a, b) => a.from - b.from || a.to - b.to));
  });

  it('a bound of 0 keeps nothing and says so', () => {
    expect(nearestEdges([{ from: 1, to: 2 }], [1, 2], 0)).toEqual({ edges: [], cut: true });
  });
});
