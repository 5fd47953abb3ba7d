import { DuplicateKeyError } from '../errors';

/**
 * Refuses a graph naming one dedup key on two nodes (pure). Both would be inserted and the
 * second fail on the unique index (a raw database error, after two retries of the whole graph),
 * or, with the key already taken, both match one job and a node depending on both failed on
 * job_deps' primary key: refused whatever the database holds, before anything is written.
 */
export function assertUniqueKeys(nodes: ReadonlyArray<{ ref: string; key: string | null }>): void {
  const refOf = new Map<string, string>();
  for (const { ref, key } of nodes) {
    if (key === null) continue;
    const first = refOf.get(key);
    if (first !== undefined) throw new DuplicateKeyError(key, [first, ref]);
    refOf.set(key, ref);
  }
}
