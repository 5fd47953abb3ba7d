/**
 * The most edges that leave one job or enter one job (pure). The graph page draws a graph whose
 * widest fan passes a bound with each job's edges merged into one trunk.
 */
export function widestFan(edges: ReadonlyArray<{ from: number; to: number }>): number {
  const out = new Map<number, number>();
  const into = new Map<number, number>();
  let widest = 0;
  for (const e of edges) {
    const o = (out.get(e.from) ?? 0) + 1;
    const i = (into.get(e.to) ?? 0) + 1;
    out.set(e.from, o);
    into.set(e.to, i);
    widest = Math.max(widest, o, i);
  }
  return widest;
}
