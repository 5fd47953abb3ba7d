import { IDS_PER_NOTIFICATION } from '../../notify/settled-notify.sql';
import { SETTLED_CHANNEL } from '../../notify/notify.sql';
import { JobQueueMigration } from '../job-queue-migration';

/**
 * `job_queue_fail`: a worker's failed attempts in one statement, as `job_queue_complete` writes
 * its completions. The transactional path took a BEGIN, an UPDATE of one CASE branch per job
 * (text of ~1,500 parameters, parsed and planned on every call), a read of the failed jobs'
 * dependents, a COMMIT and the settled notification after it: a batch of 500 failures cost
 * ~60 ms against a complete's 17 ms (`.scratch/fail-tput.cjs`).
 *
 * The same guarded write (the worker's running job; back to `ready` after `delay_ms` while
 * attempts remain and the failure is not final, else `failed`), then the settled notification
 * of the jobs failed for good. A job failed for good that has dependents or a container needs
 * the cascade (lib/finalize/cascade.sql.ts), which stays in TypeScript: the function then undoes
 * its write (a subtransaction rolled back, nothing logged) and returns one `cascade` row, and
 * the caller writes the batch in a transaction as before. The dependents are read after the
 * UPDATE holds the rows' locks, so an enqueue that added a dependent under FOR SHARE of its
 * upstream (lib/enqueue/job-insert.sql.ts) has committed and is seen.
 *
 * Rows: (`retried`, id) and (`failed`, id) per job written, or one (`cascade`, NULL). A job the
 * guard turned down has no row.
 */
export const FAIL_SQL_V37 = `CREATE FUNCTION job_queue_fail(p_owner text, p_ids bigint[], p_errors text[], p_delays_ms float8[], p_finals boolean[], p_notify boolean)
      RETURNS TABLE (kind text, job bigint)
      LANGUAGE plpgsql VOLATILE
      SET plan_cache_mode = force_generic_plan
      SET enable_seqscan = off
    AS $body$
    #variable_conflict use_column
    DECLARE
      v_retried bigint[];
      v_failed bigint[];
      v_contained boolean;
    BEGIN
      BEGIN
        WITH v AS (SELECT * FROM unnest(p_ids, p_errors, p_delays_ms, p_finals) AS u (id, error, delay_ms, final)),
        f AS (
          UPDATE jobs SET
            state = CASE WHEN jobs.attempts < jobs.max_attempts AND NOT v.final THEN 'ready' ELSE 'failed' END,
            run_after = CASE WHEN jobs.attempts < jobs.max_attempts AND NOT v.final THEN now() + v.delay_ms * interval '1 millisecond' ELSE jobs.run_after END,
            finished_at = CASE WHEN jobs.attempts < jobs.max_attempts AND NOT v.final THEN NULL ELSE now() END,
            last_error = v.error, lease_owner = NULL, lease_expires = NULL, updated_at = now()
          FROM v
          WHERE jobs.id = v.id AND jobs.lease_owner = p_owner AND jobs.state || '' = 'running'
          RETURNING jobs.id, jobs.state, jobs.parent_id)
        SELECT array_agg(f.id ORDER BY f.id) FILTER (WHERE f.state = 'ready'),
               array_agg(f.id ORDER BY f.id) FILTER (WHERE f.state = 'failed'),
               COALESCE(bool_or(f.state = 'failed' AND f.parent_id IS NOT NULL), false)
          INTO v_retried, v_failed, v_contained FROM f;
        IF v_contained OR EXISTS (SELECT 1 FROM job_deps d WHERE d.depends_on_id = ANY (v_failed)) THEN
          RAISE EXCEPTION USING ERRCODE = 'JQ001';
        END IF;
      EXCEPTION WHEN SQLSTATE 'JQ001' THEN
        RETURN QUERY SELECT 'cascade'::text, NULL::bigint;
        RETURN;
      END;
      IF p_notify AND v_failed IS NOT NULL THEN
        PERFORM pg_notify('${SETTLED_CHANNEL}', string_agg(id::text, ',')) FROM (
          SELECT id, (row_number() OVER () - 1) / ${IDS_PER_NOTIFICATION} AS part FROM unnest(v_failed) AS t (id)) s GROUP BY part;
      END IF;
      RETURN QUERY SELECT 'retried'::text, r FROM unnest(v_retried) AS r
        UNION ALL SELECT 'failed'::text, x FROM unnest(v_failed) AS x;
    END
    $body$`;

export class JobQueueFailFunctionPostgres1769200000001 extends JobQueueMigration {
  readonly version = 37;
  readonly name = 'JobQueueFailFunction1769200000001';
  protected readonly upSql = [FAIL_SQL_V37];
  protected readonly downSql = [`DROP FUNCTION job_queue_fail(text, bigint[], text[], float8[], boolean[], boolean)`];
}
