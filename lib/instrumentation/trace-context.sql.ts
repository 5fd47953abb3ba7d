import { chunked, sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { AttemptTrace } from './job-queue.instrumentation';
import { readStoredCreation, storedCarrier } from './stored-trace';
import { MAX_UPSTREAM_LINKS } from './upstream-links';

/**
 * Only with an instrumentation registered: the stored carriers of claimed jobs, their own and
 * those of their first MAX_UPSTREAM_LINKS upstreams by id, in one statement per 1,000 jobs. Kept out of the claim itself, so the claim
 * statements (and the PL/pgSQL claim functions) read no more than their rows; a traced claim
 * returns each job's own column, and only jobs with upstreams (or whose column does not say, see
 * stored-trace.ts) come here.
 *
 * MySQL and SQLite walk each job's upstreams in key order, one index seek per upstream, and stop
 * at MAX_UPSTREAM_LINKS: numbering them with ROW_NUMBER() read every edge of the job first, so a
 * fan-in of 100,000 cost 40-50 ms per attempt on MariaDB and SQLite (on SQLite in the worker's
 * own thread), growing with the fan-in.
 */
export async function readAttemptTraces(db: SqlExecutor, ids: readonly number[]): Promise<Map<number, AttemptTrace>> {
  const traces = new Map<number, { created: string | null; upstream: Array<{ id: number; carrier: string }> }>();
  for (const id of ids) traces.set(id, { created: null, upstream: [] });
  for (const chunk of chunked(ids)) {
    const list = sql.list(chunk);
    // PostgreSQL: one call of `job_queue_trace_contexts` (migration 15), planned once per session.
    const { rows } = await db.run(
      db.dialect.name === 'postgres'
        ? sql`SELECT job_id, upstream_id, trace_context FROM job_queue_trace_contexts(${chunk}::bigint[])`
        : sql`WITH RECURSIVE up (job_id, dep, n) AS (
              SELECT j.id, (SELECT c.depends_on_id FROM job_deps c WHERE c.job_id = j.id ORDER BY c.depends_on_id LIMIT 1), 1
              FROM jobs j WHERE j.id IN (${list})
            UNION ALL
              SELECT up.job_id, (SELECT c.depends_on_id FROM job_deps c WHERE c.job_id = up.job_id AND c.depends_on_id > up.dep
                ORDER BY c.depends_on_id LIMIT 1), up.n + 1
              FROM up WHERE up.dep IS NOT NULL AND up.n < ${sql.raw(String(MAX_UPSTREAM_LINKS))})
          SELECT j.id AS job_id, NULL AS upstream_id, j.trace_context FROM jobs j
            WHERE j.id IN (${list}) AND j.trace_context IS NOT NULL
          UNION ALL
          SELECT d.job_id, d.dep, u.trace_context FROM up d JOIN jobs u ON u.id = d.dep
            WHERE u.trace_context IS NOT NULL`,
    );
    for (const r of rows) {
      const trace = traces.get(Number(r.job_id));
      if (!trace) continue;
      if (r.upstream_id == null) trace.created = readStoredCreation(r.trace_context).created;
      else trace.upstream.push({ id: Number(r.upstream_id), carrier: storedCarrier(r.trace_context) });
    }
  }
  for (const trace of traces.values()) trace.upstream.sort((a, b) => a.id - b.id);
  return traces;
}
