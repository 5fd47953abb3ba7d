import { SETTLED_CHANNEL } from '../../notify/notify.sql';
import { JobQueueMigration } from '../job-queue-migration';

/**
 * NOTIFY on every job that becomes done, failed or cancelled, whoever settles it (a worker's
 * finalize, a cascade, a sweep, a cancel, a container roll-up): the payload is the job id and
 * it is delivered when that transaction commits. Processes with a `waitFor` pending hear their
 * jobs at once instead of at their next poll. A row trigger with a WHEN clause: other updates
 * (claims, heartbeats, progress) never enter the function.
 */
export class JobQueueSettledNotifyPostgres1765400000001 extends JobQueueMigration {
  readonly version = 7;
  readonly name = 'JobQueueSettledNotify1765400000001';
  protected readonly upSql = [
    `CREATE FUNCTION job_queue_notify_settled() RETURNS trigger LANGUAGE plpgsql AS $body$
    BEGIN
      PERFORM pg_notify('${SETTLED_CHANNEL}', NEW.id::text);
      RETURN NULL;
    END
    $body$`,
    `CREATE TRIGGER job_queue_settled_notify AFTER UPDATE OF state ON jobs FOR EACH ROW
      WHEN (NEW.state IN ('done', 'failed', 'cancelled') AND OLD.state IS DISTINCT FROM NEW.state)
      EXECUTE FUNCTION job_queue_notify_settled()`,
  ];
  protected readonly downSql = [`DROP TRIGGER job_queue_settled_notify ON jobs`, `DROP FUNCTION job_queue_notify_settled()`];
}
