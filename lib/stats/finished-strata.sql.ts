import { sql, type Sql } from '../database/sql';
import type { SqlDialect } from '../database/dialects';
import type { SqlExecutor } from '../database/sql-executor';
import type { StratumSample, Stretch } from './finished-strata';

/**
 * Finished jobs in each stretch, at most `cap` rows per stretch in finished_at order through
 * jobs_finished_idx: per (stretch k, state) how many, the last finished_at read, and the done
 * rows' summed durations. One statement for all the stretches.
 */
export function finishedInStrata(d: SqlDialect, stretches: readonly Stretch[], cap: number): Sql {
  const arms = stretches.map(({ from, to }, k) => sql`SELECT ${sql.raw(String(k))} AS k, state, started_at, finished_at FROM (
      SELECT state, started_at, finished_at FROM jobs
      WHERE finished_at >= ${d.timeParam(new Date(from))} AND finished_at < ${d.timeParam(new Date(to))}
      ORDER BY finished_at LIMIT ${cap}) ${sql.raw(`t${k}`)}`);
  return sql`SELECT k, state, COUNT(*) AS n, ${d.selectTime('MAX(finished_at)')} AS last,
      SUM(${d.diffMs(sql`started_at`, sql`finished_at`)}) AS ms, COUNT(started_at) AS timed
    FROM (${sql.join(arms, ' UNION ALL ')}) u GROUP BY k, state`;
}

/** One sample per stretch (see finished-strata.ts for how they are counted). */
export async function readFinishedStrata(db: SqlExecutor, stretches: readonly Stretch[], cap: number): Promise<StratumSample[]> {
  const samples: StratumSample[] = stretches.map(() => ({ done: 0, failed: 0, rows: 0, last: null, doneMs: 0, timed: 0 }));
  if (!stretches.length) return samples;
  const { rows } = await db.run(finishedInStrata(db.dialect, stretches, cap));
  for (const r of rows) {
    const sample = samples[Number(r.k)];
    const n = Number(r.n);
    sample.rows += n;
    if (r.state === 'done') {
      sample.done += n;
      sample.doneMs += Number(r.ms ?? 0);
      sample.timed += Number(r.timed ?? 0);
    } else if (r.state === 'failed') sample.failed += n;
    const last = db.dialect.parseTime(r.last);
    if (last && (!sample.last || last > sample.last)) sample.last = last;
  }
  return samples;
}
