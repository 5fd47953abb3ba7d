import { NOTIFY_CHANNEL } from '../../notify/notify.sql';
import { JobQueueMigration } from '../job-queue-migration';

const CLAIM_SIGNATURE = 'job_queue_claim(text, text[], text[], int[], int, float8, boolean)';

export class JobQueueCompleteFunctionPostgres1764748800000 extends JobQueueMigration {
  readonly version = 5;
  readonly name = 'JobQueueCompleteFunction1764748800000';
  protected readonly upSql = [
    // PL/pgSQL caches a statement's plan but, by default, re-plans it with the call's values for
    // a while and keeps doing so when the custom plans look cheaper, which for this CTE they
    // always do: half of a small claim's time went to planning. Plan it once per session.
    // A plan made once is made on whatever the statistics say at the first call, often an empty,
    // never-analyzed table, where a sequential scan looks cheapest; kept, that scan read the
    // whole table on every later claim. So sequential scans are off too: every table access
    // here has an index that serves it.
    `ALTER FUNCTION ${CLAIM_SIGNATURE} SET plan_cache_mode = force_generic_plan`,
    `ALTER FUNCTION ${CLAIM_SIGNATURE} SET enable_seqscan = off`,
    // The batched complete as one function call: the guarded complete, the dependents' countdown
    // and promotion, and the NOTIFY, planned once per session instead of on every batch, with
    // index paths only (as above: a sequential scan of jobs per batch made chains of jobs run at
    // 3k jobs/s with PostgreSQL using a whole core).
    // $1 owner, $2 ids, $3 result JSON per id, $4 notify.
    //
    // The lease guard is written `state || '' = 'running'` on purpose. Spelled plainly it
    // matches the partial in-flight index, and on statistics gathered while few jobs ran (the
    // usual case: a queue table is analyzed between bursts) the planner then scans every
    // in-flight row of every worker and joins them to the batch: 7 ms instead of 0.3 ms for
    // 10 jobs among 3,000 in flight. Unmatchable, it leaves one primary-key probe per job.
    //
    // It returns the exceptions, not the batch: a 'refused' row per job the guard turned down
    // (lease lost, cancelled, timed out) and one 'promoted' row with the count made ready.
    `CREATE FUNCTION job_queue_complete(text, bigint[], text[], boolean)
      RETURNS TABLE (kind text, job bigint)
      LANGUAGE plpgsql VOLATILE
      SET plan_cache_mode = force_generic_plan
      SET enable_seqscan = off
    AS $body$
    #variable_conflict use_column
    BEGIN
      RETURN QUERY
      WITH v AS (SELECT * FROM unnest($2, $3) AS u (id, result)),
      done AS (
        UPDATE jobs SET result = v.result, state = 'done', progress = 100, finished_at = now(),
          lease_owner = NULL, lease_expires = NULL, updated_at = now()
        FROM v
        WHERE jobs.id = v.id AND jobs.lease_owner = $1 AND jobs.state || '' = 'running'
        RETURNING jobs.id),
      dep AS (
        SELECT d.job_id, COUNT(*) AS n FROM job_deps d JOIN done ON d.depends_on_id = done.id GROUP BY d.job_id),
      promoted AS (
        UPDATE jobs j SET state = CASE WHEN j.state = 'waiting' AND j.is_container = 0 AND j.pending_deps - dep.n <= 0 THEN 'ready' ELSE j.state END,
          pending_deps = j.pending_deps - dep.n, updated_at = now()
        FROM dep WHERE j.id = dep.job_id
        RETURNING j.id, j.state),
      woken AS (
        SELECT pg_notify('${NOTIFY_CHANNEL}', 'r') FROM (SELECT 1 FROM promoted WHERE state = 'ready' AND $4 LIMIT 1) p)
      SELECT 'refused'::text, v.id FROM v WHERE NOT EXISTS (SELECT 1 FROM done WHERE done.id = v.id)
      UNION ALL SELECT 'promoted'::text, COUNT(*) FROM promoted WHERE state = 'ready'
      UNION ALL SELECT 'notified'::text, NULL::bigint FROM woken;
    END
    $body$`,
  ];
  protected readonly downSql = [
    `DROP FUNCTION job_queue_complete(text, bigint[], text[], boolean)`,
    `ALTER FUNCTION ${CLAIM_SIGNATURE} RESET enable_seqscan`,
    `ALTER FUNCTION ${CLAIM_SIGNATURE} RESET plan_cache_mode`,
  ];
}
