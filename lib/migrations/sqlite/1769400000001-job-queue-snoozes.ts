import { JobQueueMigration } from '../job-queue-migration';

/** `snoozes` (see the PostgreSQL migration of the same name). */
export class JobQueueSnoozesSqlite1769400000001 extends JobQueueMigration {
  readonly version = 22;
  readonly name = 'JobQueueSnoozes1769400000001';
  protected readonly upSql = [`ALTER TABLE jobs ADD COLUMN snoozes INTEGER NOT NULL DEFAULT 0`];
  protected readonly downSql = [`ALTER TABLE jobs DROP COLUMN snoozes`];
}
