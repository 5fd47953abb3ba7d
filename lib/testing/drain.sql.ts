import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';

/** Makes every delayed `ready` job (runAfter or retry backoff) claimable now. Returns how many. */
export async function runDelayedNow(db: SqlExecutor): Promise<number> {
  const now = db.dialect.now();
  const { affected } = await db.run(sql`UPDATE jobs SET run_after = ${now} WHERE state = 'ready' AND run_after > ${now}`);
  return affected;
}

export interface OpenWork {
  type: string;
  group: string;
  state: 'ready' | 'leased' | 'running';
  count: number;
  /** Lowest id of these jobs, for messages. */
  firstId: number;
}

/** Jobs that can run now or are running, by type, group and state. */
export async function readOpenWork(db: SqlExecutor): Promise<OpenWork[]> {
  const { rows } = await db.run(sql`SELECT type, group_key, state, COUNT(*) AS n, MIN(id) AS first_id FROM jobs
    WHERE state IN ('leased', 'running') OR (state = 'ready' AND run_after <= ${db.dialect.now()})
    GROUP BY type, group_key, state ORDER BY MIN(id)`);
  return rows.map((r) => ({
    type: String(r.type),
    group: String(r.group_key),
    state: r.state as OpenWork['state'],
    count: Number(r.n),
    firstId: Number(r.first_id),
  }));
}

/** How many jobs are in each state. */
export async function countByState(db: SqlExecutor): Promise<Record<string, number>> {
  const { rows } = await db.run(sql`SELECT state, COUNT(*) AS n FROM jobs GROUP BY state`);
  return Object.fromEntries(rows.map((r) => [String(r.state), Number(r.n)]));
}
