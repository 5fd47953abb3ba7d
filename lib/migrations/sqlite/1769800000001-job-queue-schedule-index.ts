import { JobQueueMigration } from '../job-queue-migration';

/**
 * find({ schedule }): the key less its slot, with the id, for slot keys only (see the PostgreSQL
 * migration of the same name). SQLite has no `left()`; the key's own index would serve the range
 * of a schedule's keys, but then every page sorted all of that schedule's jobs.
 */
export class JobQueueScheduleIndexSqlite1769800000001 extends JobQueueMigration {
  readonly version = 26;
  readonly name = 'JobQueueScheduleIndex1769800000001';
  protected readonly upSql = [
    `CREATE INDEX IF NOT EXISTS jobs_find_schedule_idx ON jobs (substr(job_key, 1, length(job_key) - 25), id) WHERE substr(job_key, 1, 10) = 'recurring:'`,
  ];
  protected readonly downSql = [`DROP INDEX IF EXISTS jobs_find_schedule_idx`];
}
