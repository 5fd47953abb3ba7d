import { JobQueueMigration } from '../job-queue-migration';

/** `job_logs` (see the PostgreSQL migration of the same name). */
export class JobQueueLogsMysql1769300000001 extends JobQueueMigration {
  readonly version = 24;
  readonly name = 'JobQueueLogs1769300000001';
  protected readonly upSql = [
    `CREATE TABLE job_logs (
      id BIGINT NOT NULL AUTO_INCREMENT,
      job_id BIGINT NOT NULL,
      attempt INT NOT NULL,
      logged_at DATETIME(3) NOT NULL,
      message TEXT NOT NULL,
      PRIMARY KEY (id),
      KEY job_logs_job_idx (job_id, id)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
  ];
  protected readonly downSql = [`DROP TABLE job_logs`];
}
