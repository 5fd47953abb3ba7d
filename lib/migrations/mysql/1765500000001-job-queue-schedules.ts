import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueSchedulesMysql1765500000001 extends JobQueueMigration {
  readonly version = 7;
  readonly name = 'JobQueueSchedules1765500000001';
  protected readonly upSql = [
    // One row per recurring schedule; next_run_at is the earliest slot not yet enqueued.
    `CREATE TABLE job_queue_schedules (
      name VARCHAR(200) NOT NULL PRIMARY KEY,
      cron VARCHAR(200) NOT NULL,
      time_zone VARCHAR(100) NOT NULL,
      job_type VARCHAR(200) NOT NULL,
      args LONGTEXT NOT NULL,
      backfill VARCHAR(16) NOT NULL,
      misfire_grace_ms INT NOT NULL,
      job_options TEXT NOT NULL,
      next_run_at DATETIME(3) NOT NULL,
      last_slot DATETIME(3) NULL,
      last_enqueued_at DATETIME(3) NULL,
      created_at DATETIME(3) NOT NULL,
      updated_at DATETIME(3) NOT NULL,
      KEY job_queue_schedules_next_idx (next_run_at)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_schedules`];
}
