import type { GraphEdge } from '../query/graph-edge';

export type { GraphEdge };

/**
 * At most `max` of `edges`, the nearest to the job kept (pure). `order` lists the nodes nearest
 * first (walkGraph's order); an edge is as near as its farther end. 1,000 nodes may hold
 * 250,000 edges (a 500 × 500 shuffle: 5.4 MB per refresh of the page, and more than a browser lays
 * out), so the page gets a bounded share of them with `truncated`. The result is sorted by
 * upstream, then dependent, as the page expects; edges with an end outside `order` are dropped.
 */
export function nearestEdges(edges: readonly GraphEdge[], order: readonly number[], max: number): { edges: GraphEdge[]; cut: boolean } {
  const rank = new Map<number, number>();
  order.forEach((id, i) => rank.set(id, i));
  const ranked = edges.filter((e) => rank.has(e.from) && rank.has(e.to));
  const cut = ranked.length > max;
  const kept = cut
    ? ranked
        .map((e) => ({ e, near: Math.max(rank.get(e.from)!, rank.get(e.to)!), far: Math.min(rank.get(e.from)!, rank.get(e.to)!) }))
        .sort((a, b) => a.near - b.near || a.far - b.far)
        .slice(0, max)
        .map((r) => r.e)
    : ranked.slice();
  return { edges: kept.sort((a, b) => a.from - b.from || a.to - b.to), cut };
}
