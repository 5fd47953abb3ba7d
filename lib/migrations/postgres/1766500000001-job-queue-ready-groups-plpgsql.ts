import { JobQueueMigration } from '../job-queue-migration';
import { READY_GROUPS_SQL_V7 } from './1765000000001-job-queue-rotation';

const CLAIM_FUNCTIONS = [
  'job_queue_claim(text, text[], text[], int[], int, float8, boolean)',
  'job_queue_claim_rotation(text, text[], int, float8, boolean, text[], int[])',
];

/** The walk as this migration defines it (migration 21 replaces it; its down step restores this). */
export const READY_GROUPS_SQL_V14 = `CREATE OR REPLACE FUNCTION job_queue_ready_groups(text[], text, text, int)
      RETURNS TABLE (group_key text, weight int, n int)
      LANGUAGE plpgsql STABLE
      SET enable_bitmapscan = off
    AS $body$
    BEGIN
      RETURN QUERY
      WITH RECURSIVE walk (g, w, k) AS (
        (SELECT j.group_key::text, j.weight, 1 FROM jobs j
          WHERE j.state = 'ready' AND j.run_after <= now() AND j.type = ANY ($1)
            AND j.group_key >= $2 AND ($3 IS NULL OR j.group_key < $3)
          ORDER BY j.group_key, j.priority DESC, j.id LIMIT 1)
        UNION ALL
        SELECT nx.group_key::text, nx.weight, walk.k + 1 FROM walk
        CROSS JOIN LATERAL (
          SELECT j.group_key, j.weight FROM jobs j
          WHERE j.state = 'ready' AND j.run_after <= now() AND j.type = ANY ($1)
            AND j.group_key > walk.g AND ($3 IS NULL OR j.group_key < $3)
          ORDER BY j.group_key, j.priority DESC, j.id LIMIT 1
        ) nx
        WHERE walk.k < $4
      )
      SELECT walk.g, walk.w, walk.k FROM walk;
    END
    $body$`;

export class JobQueueReadyGroupsPlpgsqlPostgres1766500000001 extends JobQueueMigration {
  readonly version = 14;
  readonly name = 'JobQueueReadyGroupsPlpgsql1766500000001';
  protected readonly upSql = [
    // The same walk as migration 7, in PL/pgSQL instead of SQL. Every rotation claim calls it: a
    // SQL-language function that cannot be inlined (it has a SET clause) is parsed and planned
    // again at every call, which cost ~1.3 ms of a ~1.6 ms claim at 10,000 groups while the walk
    // itself runs in ~0.15 ms; PL/pgSQL keeps the plan for the session.
    READY_GROUPS_SQL_V14,
    // The claims' final UPDATE joins the few rows just locked to jobs by id. Once the table has
    // been analyzed (autovacuum does so after 2% of it changed, migration 4), the generic plan
    // of job_queue_claim estimates ~10% of the ready rows for its LIMIT $5 and merge-joins them
    // with a full scan of jobs_pkey: 47 ms for a 10-job claim at 16,000 ready jobs, ~0.1 ms with
    // the nested loop these settings leave it.
    ...CLAIM_FUNCTIONS.map((f) => `ALTER FUNCTION ${f} SET enable_mergejoin = off`),
    ...CLAIM_FUNCTIONS.map((f) => `ALTER FUNCTION ${f} SET enable_hashjoin = off`),
  ];
  protected readonly downSql = [
    ...CLAIM_FUNCTIONS.map((f) => `ALTER FUNCTION ${f} RESET enable_mergejoin`),
    ...CLAIM_FUNCTIONS.map((f) => `ALTER FUNCTION ${f} RESET enable_hashjoin`),
    `DROP FUNCTION job_queue_ready_groups(text[], text, text, int)`,
    READY_GROUPS_SQL_V7,
  ];
}
