import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueSchedulesPostgres1765500000001 extends JobQueueMigration {
  readonly version = 11;
  readonly name = 'JobQueueSchedules1765500000001';
  protected readonly upSql = [
    // One row per recurring schedule; next_run_at is the earliest slot not yet enqueued.
    `CREATE TABLE job_queue_schedules (
      name varchar(200) PRIMARY KEY,
      cron varchar(200) NOT NULL,
      time_zone varchar(100) NOT NULL,
      job_type varchar(200) NOT NULL,
      args text NOT NULL,
      backfill varchar(16) NOT NULL,
      misfire_grace_ms integer NOT NULL,
      job_options text NOT NULL,
      next_run_at timestamptz NOT NULL,
      last_slot timestamptz,
      last_enqueued_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE INDEX job_queue_schedules_next_idx ON job_queue_schedules (next_run_at)`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_schedules`];
}
