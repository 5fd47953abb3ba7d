import { createHash } from 'node:crypto';
import { PgArrayLiteral } from '../database/pg-array-literal';
import { chunked, sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';

/**
 * PostgreSQL: configured `groupWeights` up to this many travel with each rotation claim as two
 * array parameters; more are stored once as a weight set (migration 33) that the claim looks each
 * group it visits up in. The arrays are parsed on every claim and searched per group visited, so
 * their cost grows with every weight: 100 live groups, one worker, 4,425 jobs/s with 101 weights,
 * 4,005 with 3,100, 2,309–2,445 with 10,100, 895 with 30,100.
 */
export const WEIGHTS_IN_CALL_MAX = 100;

/** Days a stored set nobody marks seen is kept (processes mark theirs at boot and daily). */
export const WEIGHT_SET_KEEP_DAYS = 30;

/** How a rotation claim carries the configured weights, built once per options object. */
export interface ClaimWeights {
  count: number;
  /** The weights themselves (WEIGHTS_IN_CALL_MAX at most; else empty). */
  groups: PgArrayLiteral;
  weights: PgArrayLiteral;
  /** The stored set's name (more than WEIGHTS_IN_CALL_MAX), else null. */
  setId: string | null;
}

const NO_WEIGHTS: ClaimWeights = { count: 0, groups: PgArrayLiteral.ofText([]), weights: PgArrayLiteral.ofInt([]), setId: null };
const cache = new WeakMap<Record<string, number>, ClaimWeights>();

/** The claim's form of `groupWeights` (see WEIGHTS_IN_CALL_MAX), computed once per options object. */
export function claimWeightsOf(groupWeights: Record<string, number> | undefined): ClaimWeights {
  if (!groupWeights) return NO_WEIGHTS;
  let found = cache.get(groupWeights);
  if (!found) {
    const entries = Object.entries(groupWeights);
    found =
      entries.length > WEIGHTS_IN_CALL_MAX
        ? { ...NO_WEIGHTS, count: entries.length, setId: weightSetId(groupWeights) }
        : { count: entries.length, groups: PgArrayLiteral.ofText(entries.map(([g]) => g)), weights: PgArrayLiteral.ofInt(entries.map(([, w]) => w)), setId: null };
    cache.set(groupWeights, found);
  }
  return found;
}

/**
 * A weight set's name: a hash of its content, whatever the order of the keys. Sets are never
 * changed, so processes with the same weights share one and a process with other weights (the
 * next version of a rolling deploy) never alters the set the others claim with.
 */
export function weightSetId(groupWeights: Record<string, number>): string {
  const entries = Object.entries(groupWeights).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `w1:${createHash('sha256').update(JSON.stringify(entries)).digest('hex').slice(0, 40)}`;
}

/**
 * Stores this process's weight set if it is not there yet, marks it seen, and deletes the sets
 * nobody has marked for WEIGHT_SET_KEEP_DAYS. In one transaction: a process that starts at the
 * same moment waits on the set's row until the weights are in, then finds them. A no-op without
 * a stored set (few weights, or another dialect: they look weights up in the process).
 */
export async function ensureWeightSet(tx: SqlExecutor, groupWeights: Record<string, number>): Promise<void> {
  const { setId, count } = claimWeightsOf(groupWeights);
  if (tx.dialect.name !== 'postgres' || !setId) return;
  const { rows } = await tx.run(sql`INSERT INTO job_queue_weight_sets (id, weights) VALUES (${setId}, ${count})
    ON CONFLICT (id) DO UPDATE SET seen_at = now() RETURNING (xmax = 0) AS created`);
  if (rows[0]?.created) {
    for (const chunk of chunked(Object.entries(groupWeights), 5_000)) {
      await tx.run(sql`INSERT INTO job_queue_group_weights (set_id, group_key, weight)
        SELECT ${setId}, u.g, u.w FROM unnest(${chunk.map(([g]) => g)}::text[], ${chunk.map(([, w]) => Math.trunc(w))}::int[]) AS u (g, w)`);
    }
  }
  await tx.run(sql`DELETE FROM job_queue_weight_sets WHERE seen_at < now() - make_interval(days => ${WEIGHT_SET_KEEP_DAYS}) AND id <> ${setId}`);
}
