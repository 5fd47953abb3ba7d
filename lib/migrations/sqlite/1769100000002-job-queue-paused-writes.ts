import { JobQueueMigration } from '../job-queue-migration';

/**
 * `paused_writes` (see the PostgreSQL migration of the same name): a row trigger per write; an
 * INSERT OR IGNORE that inserts nothing fires none.
 */
export class JobQueuePausedWritesSqlite1769100000002 extends JobQueueMigration {
  readonly version = 20;
  readonly name = 'JobQueuePausedWrites1769100000002';
  protected readonly upSql = [
    `INSERT OR IGNORE INTO job_queue_versions (name, version) VALUES ('paused_writes', 0)`,
    ...[
      ['inserted', 'INSERT'],
      ['updated', 'UPDATE'],
      ['deleted', 'DELETE'],
    ].map(
      ([name, op]) =>
        `CREATE TRIGGER job_queue_paused_${name} AFTER ${op} ON job_queue_paused FOR EACH ROW
          BEGIN UPDATE job_queue_versions SET version = version + 1 WHERE name = 'paused_writes'; END`,
    ),
  ];
  protected readonly downSql = [
    `DROP TRIGGER IF EXISTS job_queue_paused_deleted`,
    `DROP TRIGGER IF EXISTS job_queue_paused_updated`,
    `DROP TRIGGER IF EXISTS job_queue_paused_inserted`,
    `DELETE FROM job_queue_versions WHERE name = 'paused_writes'`,
  ];
}
