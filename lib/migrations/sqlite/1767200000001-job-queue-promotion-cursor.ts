import { JobQueueMigration } from '../job-queue-migration';

export class JobQueuePromotionCursorSqlite1767200000001 extends JobQueueMigration {
  readonly version = 10;
  readonly name = 'JobQueuePromotionCursor1767200000001';
  protected readonly upSql = [
    // A done job with more dependents than one slice counts them down in slices, one transaction
    // each, so no transaction holds SQLite's write lock for the whole promotion (100,000
    // dependents: 1-2 s, every other worker's claims stalled meanwhile). A row here says: job
    // `job_id` is done and has counted down its dependents up to `after_job_id`; the rest are
    // still to do. Each slice advances it in the same transaction as its UPDATE, so a crash
    // between slices loses none and counts none twice (lib/finalize/sliced-promotions.ts).
    `CREATE TABLE job_queue_promotions (job_id INTEGER PRIMARY KEY, after_job_id INTEGER NOT NULL)`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_promotions`];
}
