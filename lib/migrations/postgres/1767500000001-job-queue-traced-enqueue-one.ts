import { NOTIFY_CHANNEL } from '../../notify/notify.sql';
import { JobQueueMigration } from '../job-queue-migration';

/**
 * Tracing: `enqueue()` of one job without a key in one round trip with its trace context, as the
 * untraced path (migration 6) does without. A traced single enqueue took the general path before:
 * BEGIN, INSERT, NOTIFY, COMMIT and a read of the job, five statements instead of one. A ten-argument
 * overload, so the nine-argument form untraced apps call stays exactly as it was.
 * $10: the job's stored trace context (lib/instrumentation/stored-trace.ts).
 */
export class JobQueueTracedEnqueueOnePostgres1767500000001 extends JobQueueMigration {
  readonly version = 19;
  readonly name = 'JobQueueTracedEnqueueOne1767500000001';
  protected readonly upSql = [
    `CREATE FUNCTION job_queue_enqueue_one(text, text, text, int, int, timestamptz, int, int, boolean, text)
      RETURNS SETOF jobs
      LANGUAGE plpgsql VOLATILE
      SET plan_cache_mode = force_generic_plan
    AS $body$
    DECLARE
      job jobs;
    BEGIN
      INSERT INTO jobs (type, args, state, group_key, weight, priority, run_after, max_attempts, timeout_ms, created_at, updated_at, trace_context)
      VALUES ($1, $2, 'ready', $3, $4, $5, COALESCE($6, now()), $7, $8, now(), now(), $10)
      RETURNING * INTO job;
      IF $9 THEN
        PERFORM pg_notify('${NOTIFY_CHANNEL}', 'r');
      END IF;
      RETURN NEXT job;
    END
    $body$`,
  ];
  protected readonly downSql = [`DROP FUNCTION job_queue_enqueue_one(text, text, text, int, int, timestamptz, int, int, boolean, text)`];
}
