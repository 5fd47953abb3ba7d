import { JobQueueMigration } from '../job-queue-migration';

/** `job_queue_ticker` (see the PostgreSQL migration of the same name). Times are UTC text. */
export class JobQueueTickerSqlite1769700000001 extends JobQueueMigration {
  readonly version = 25;
  readonly name = 'JobQueueTicker1769700000001';
  protected readonly upSql = [
    `CREATE TABLE job_queue_ticker (
      name TEXT NOT NULL PRIMARY KEY,
      ticking_since TEXT NOT NULL,
      last_contact_at TEXT NOT NULL
    ) WITHOUT ROWID`,
    `INSERT INTO job_queue_ticker (name, ticking_since, last_contact_at) VALUES ('recurring', '1970-01-01 00:00:00.000', '1970-01-01 00:00:00.000')`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_ticker`];
}
