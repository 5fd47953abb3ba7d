import { JobQueueMigration } from '../job-queue-migration';

/**
 * Huge promotions in slices, as on SQLite (migration 10) and PostgreSQL (migration 24): a done job
 * with more than 2,000 dependents gets a row here instead of its countdown in the finalize's
 * transaction, and lib/finalize/sliced-promotions.ts counts its dependents down after the commit,
 * 2,000 per transaction, the row locked with SKIP LOCKED. `job_deps_depends_on_idx` needs no
 * change: InnoDB's secondary index carries the primary key (job_id, depends_on_id), so a slice
 * reads its range of a job's dependents in job_id order already.
 */
export class JobQueuePromotionCursorMysql1767900000002 extends JobQueueMigration {
  readonly version = 15;
  readonly name = 'JobQueuePromotionCursor1767900000002';
  protected readonly upSql = [
    `CREATE TABLE job_queue_promotions (job_id BIGINT NOT NULL PRIMARY KEY, after_job_id BIGINT NOT NULL) ENGINE=InnoDB`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_promotions`];
}
