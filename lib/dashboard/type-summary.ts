import type { Row } from '../database/sql-executor';

/** One job type on the overview: its open work, its failed jobs kept, and whether it is paused. */
export interface TypeSummary {
  type: string;
  waiting: number;
  ready: number;
  /** Leased or running. */
  running: number;
  failed: number;
  paused: boolean;
}

/**
 * The overview's types from the rows of `typesAtWork` (type, state, n) and `failedByType`
 * (type, n): the `limit` with the most open work (waiting + ready + in flight), then the most
 * failed, then by name. `partial` when more types were seen than shown or a read stopped at its cap.
 */
export function summarizeTypes(
  open: readonly Row[],
  failed: readonly Row[],
  limit: number,
  capped: { open: boolean; failed: boolean },
): { types: Array<Omit<TypeSummary, 'paused'>>; partial: boolean } {
  const byType = new Map<string, Omit<TypeSummary, 'paused'>>();
  const of = (type: string) => {
    let t = byType.get(type);
    if (!t) byType.set(type, (t = { type, waiting: 0, ready: 0, running: 0, failed: 0 }));
    return t;
  };
  for (const r of open) {
    const t = of(String(r.type));
    const n = Number(r.n);
    if (r.state === 'waiting') t.waiting += n;
    else if (r.state === 'ready') t.ready += n;
    else t.running += n;
  }
  for (const r of failed) of(String(r.type)).failed += Number(r.n);
  const work = (t: Omit<TypeSummary, 'paused'>) => t.waiting + t.ready + t.running;
  const sorted = [...byType.values()].sort((a, b) => work(b) - work(a) || b.failed - a.failed || (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
  return { types: sorted.slice(0, limit), partial: sorted.length > limit || capped.open || capped.failed };
}
