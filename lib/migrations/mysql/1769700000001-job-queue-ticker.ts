import { JobQueueMigration } from '../job-queue-migration';

/** `job_queue_ticker` (see the PostgreSQL migration of the same name). */
export class JobQueueTickerMysql1769700000001 extends JobQueueMigration {
  readonly version = 28;
  readonly name = 'JobQueueTicker1769700000001';
  protected readonly upSql = [
    `CREATE TABLE job_queue_ticker (
      name VARCHAR(64) NOT NULL PRIMARY KEY,
      ticking_since DATETIME(3) NOT NULL,
      last_contact_at DATETIME(3) NOT NULL
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
    `INSERT INTO job_queue_ticker (name, ticking_since, last_contact_at) VALUES ('recurring', '1970-01-01 00:00:01.000', '1970-01-01 00:00:01.000')`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_ticker`];
}
