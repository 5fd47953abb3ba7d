import { swapText } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { FAIL_SQL_V37 } from './1769200000001-job-queue-fail-function';

/**
 * Migration 37's fail, which now also appends each failed attempt's error to the job's log as a
 * line of level `error` (its first 2,000 characters, as any log line; attempts 1 to 100 of a run:
 * MAX_LOG_MESSAGE_LENGTH and MAX_ERROR_LINES, written out since a migration's text never changes),
 * in the same statement: the history of a job's errors costs no round trip. Rolled back with the rest
 * when the batch needs the cascade; the transactional path then writes the lines itself.
 */
const FAIL_SQL_V41 = swapText(
  41,
  swapText(41, FAIL_SQL_V37, 'CREATE FUNCTION job_queue_fail', 'CREATE OR REPLACE FUNCTION job_queue_fail'),
  'RETURNING jobs.id, jobs.state, jobs.parent_id)',
  `RETURNING jobs.id, jobs.state, jobs.parent_id, jobs.attempts, v.error),
        h AS (
          INSERT INTO job_logs (job_id, attempt, logged_at, message, level)
          SELECT f.id, f.attempts, now(), left(f.error, 2000), 'error' FROM f
          WHERE f.attempts <= 100 ORDER BY f.id)`,
);

/**
 * `job_logs.level`: `info` for the lines of `ctx.log()`, `error` for the line the finalize writes
 * when an attempt fails (its error), so a job's log is also the history of its errors: the
 * error of every attempt, not only the last one in `last_error`. A constant default: no rewrite.
 */
export class JobQueueErrorLinesPostgres1769500000001 extends JobQueueMigration {
  readonly version = 41;
  readonly name = 'JobQueueErrorLines1769500000001';
  protected readonly upSql = [
    `ALTER TABLE job_logs ADD COLUMN IF NOT EXISTS level text NOT NULL DEFAULT 'info'`,
    // getLogs(id, { level: 'error' }) without reading the job's other lines (100,000 lines: 16 ms
    // a page scanning them); partial, so the lines of ctx.log() cost nothing more to insert. The
    // build reads the whole table under a lock that holds log writes: on a large job_logs, run
    // these two first (the ALTER is instant), and this migration finds both done:
    //   ALTER TABLE job_logs ADD COLUMN IF NOT EXISTS level text NOT NULL DEFAULT 'info';
    //   CREATE INDEX CONCURRENTLY job_logs_errors_idx ON job_logs (job_id, id) WHERE level = 'error';
    `CREATE INDEX IF NOT EXISTS job_logs_errors_idx ON job_logs (job_id, id) WHERE level = 'error'`,
    FAIL_SQL_V41,
  ];
  protected readonly downSql = [
    swapText(41, FAIL_SQL_V37, 'CREATE FUNCTION job_queue_fail', 'CREATE OR REPLACE FUNCTION job_queue_fail'),
    `DROP INDEX job_logs_errors_idx`,
    `ALTER TABLE job_logs DROP COLUMN level`,
  ];
}
