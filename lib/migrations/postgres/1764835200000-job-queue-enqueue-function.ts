import { NOTIFY_CHANNEL } from '../../notify/notify.sql';
import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueEnqueueFunctionPostgres1764835200000 extends JobQueueMigration {
  readonly version = 6;
  readonly name = 'JobQueueEnqueueFunction1764835200000';
  protected readonly upSql = [
    // enqueue() of one job without a key, the latency path: insert, NOTIFY, return the row, as a
    // function whose insert is planned once per session. As one ad-hoc CTE statement it was
    // parsed and planned on every call, 0.15 ms of the ~1 ms from the call to the notification.
    // $1 type, $2 args JSON, $3 group, $4 weight, $5 priority, $6 run after (null: now),
    // $7 max attempts, $8 timeout ms, $9 notify.
    `CREATE FUNCTION job_queue_enqueue_one(text, text, text, int, int, timestamptz, int, int, boolean)
      RETURNS SETOF jobs
      LANGUAGE plpgsql VOLATILE
      SET plan_cache_mode = force_generic_plan
    AS $body$
    DECLARE
      job jobs;
    BEGIN
      INSERT INTO jobs (type, args, state, group_key, weight, priority, run_after, max_attempts, timeout_ms, created_at, updated_at)
      VALUES ($1, $2, 'ready', $3, $4, $5, COALESCE($6, now()), $7, $8, now(), now())
      RETURNING * INTO job;
      IF $9 THEN
        PERFORM pg_notify('${NOTIFY_CHANNEL}', 'r');
      END IF;
      RETURN NEXT job;
    END
    $body$`,
  ];
  protected readonly downSql = [`DROP FUNCTION job_queue_enqueue_one(text, text, text, int, int, timestamptz, int, int, boolean)`];
}
