/**
 * `id → count` turned into `count → ids` (each list in id order), so that rows needing the same
 * change go out in one statement per slice: most dependents of a cascade differ by nothing but id.
 */
export function idsByCount(counts: Iterable<readonly [id: number, count: number]>): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const [id, n] of counts) {
    const ids = out.get(n);
    if (ids) ids.push(id);
    else out.set(n, [id]);
  }
  for (const ids of out.values()) ids.sort((a, b) => a - b);
  return out;
}
