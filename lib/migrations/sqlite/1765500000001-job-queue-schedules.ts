import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueSchedulesSqlite1765500000001 extends JobQueueMigration {
  readonly version = 8;
  readonly name = 'JobQueueSchedules1765500000001';
  protected readonly upSql = [
    // One row per recurring schedule; next_run_at is the earliest slot not yet enqueued.
    `CREATE TABLE job_queue_schedules (
      name TEXT NOT NULL PRIMARY KEY,
      cron TEXT NOT NULL,
      time_zone TEXT NOT NULL,
      job_type TEXT NOT NULL,
      args TEXT NOT NULL,
      backfill TEXT NOT NULL,
      misfire_grace_ms INTEGER NOT NULL,
      job_options TEXT NOT NULL,
      next_run_at TEXT NOT NULL,
      last_slot TEXT,
      last_enqueued_at TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
    `CREATE INDEX job_queue_schedules_next_idx ON job_queue_schedules (next_run_at)`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_schedules`];
}
