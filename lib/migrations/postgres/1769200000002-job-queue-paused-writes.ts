import { JobQueueMigration } from '../job-queue-migration';

/**
 * `paused_writes` in `job_queue_versions`: rows of `job_queue_paused` written by any statement,
 * counted by triggers. pause() and resume() checked that nothing but their own change had come
 * since this process read the entries by counting them all in their transaction (35-40 ms at
 * 400,000 paused groups, each call); rows written by hand move no version, and the count caught
 * them. The counter catches them in one row's read, and also a write the count missed (one row
 * in, another out). A TRUNCATE counts one.
 */
export class JobQueuePausedWritesPostgres1769200000002 extends JobQueueMigration {
  readonly version = 38;
  readonly name = 'JobQueuePausedWrites1769200000002';
  protected readonly upSql = [
    `INSERT INTO job_queue_versions (name, version) VALUES ('paused_writes', 0) ON CONFLICT (name) DO NOTHING`,
    // Per statement, with its transition table: a by-hand INSERT of 100,000 rows is one update of
    // the counter, not 100,000; ON CONFLICT DO NOTHING that inserts nothing, none.
    `CREATE OR REPLACE FUNCTION job_queue_paused_written() RETURNS trigger LANGUAGE plpgsql AS $body$
    DECLARE
      n bigint;
    BEGIN
      IF TG_OP = 'TRUNCATE' THEN
        n := 1;
      ELSE
        SELECT count(*) INTO n FROM changed;
      END IF;
      IF n > 0 THEN
        UPDATE job_queue_versions SET version = version + n WHERE name = 'paused_writes';
      END IF;
      RETURN NULL;
    END
    $body$`,
    `CREATE TRIGGER job_queue_paused_inserted AFTER INSERT ON job_queue_paused REFERENCING NEW TABLE AS changed
      FOR EACH STATEMENT EXECUTE FUNCTION job_queue_paused_written()`,
    `CREATE TRIGGER job_queue_paused_updated AFTER UPDATE ON job_queue_paused REFERENCING NEW TABLE AS changed
      FOR EACH STATEMENT EXECUTE FUNCTION job_queue_paused_written()`,
    `CREATE TRIGGER job_queue_paused_deleted AFTER DELETE ON job_queue_paused REFERENCING OLD TABLE AS changed
      FOR EACH STATEMENT EXECUTE FUNCTION job_queue_paused_written()`,
    `CREATE TRIGGER job_queue_paused_truncated AFTER TRUNCATE ON job_queue_paused FOR EACH STATEMENT EXECUTE FUNCTION job_queue_paused_written()`,
  ];
  protected readonly downSql = [
    `DROP TRIGGER IF EXISTS job_queue_paused_truncated ON job_queue_paused`,
    `DROP TRIGGER IF EXISTS job_queue_paused_deleted ON job_queue_paused`,
    `DROP TRIGGER IF EXISTS job_queue_paused_updated ON job_queue_paused`,
    `DROP TRIGGER IF EXISTS job_queue_paused_inserted ON job_queue_paused`,
    `DROP FUNCTION IF EXISTS job_queue_paused_written()`,
    `DELETE FROM job_queue_versions WHERE name = 'paused_writes'`,
  ];
}
