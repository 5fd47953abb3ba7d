import type { QueryRunner } from 'typeorm';
import { swapText } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { JOBS_VALUES_LAST, rebuildJobsAtomically } from './1769100000001-job-queue-values-last';

/** Migration 19's table with `snoozes` among the small columns, before the large values. */
const JOBS_WITH_SNOOZES = swapText(22, JOBS_VALUES_LAST, `trace_context TEXT NULL,\n      last_error TEXT,`, `trace_context TEXT NULL,\n      snoozes INTEGER NOT NULL DEFAULT 0,\n      last_error TEXT,`);

/**
 * `snoozes` (see the PostgreSQL migration of the same name). Not `ADD COLUMN`: SQLite appends an
 * added column after `args`, and reading it would walk the overflow pages of every large value
 * again (what migration 19 removed: a read of a small column 578 → 7 µs with 1 MB args). The
 * table is rebuilt as migration 19 rebuilt it, in a savepoint, once, at upgrade.
 */
export class JobQueueSnoozesSqlite1769400000001 extends JobQueueMigration {
  readonly version = 22;
  readonly name = 'JobQueueSnoozes1769400000001';
  protected readonly upSql = [];
  protected readonly downSql = [`ALTER TABLE jobs DROP COLUMN snoozes`];

  override async up(queryRunner: QueryRunner): Promise<void> {
    await rebuildJobsAtomically(queryRunner, 'job_queue_snoozes', JOBS_WITH_SNOOZES);
  }
}
