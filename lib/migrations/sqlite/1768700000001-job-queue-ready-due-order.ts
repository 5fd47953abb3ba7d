import { JobQueueMigration } from '../job-queue-migration';

/**
 * Claim order becomes priority, then due time (`run_after`), then id, and the ready indexes
 * follow it, so a claim reads due rows first instead of stepping over every earlier-enqueued job
 * of its type that is due later (see the PostgreSQL migration of the same name).
 */
export class JobQueueReadyDueOrderSqlite1768700000001 extends JobQueueMigration {
  readonly version = 16;
  readonly name = 'JobQueueReadyDueOrder1768700000001';
  protected readonly upSql = [
    `DROP INDEX jobs_ready_idx`,
    `CREATE INDEX jobs_ready_idx ON jobs (type, priority DESC, run_after, id) WHERE state = 'ready'`,
    `DROP INDEX jobs_ready_group_idx`,
    `CREATE INDEX jobs_ready_group_idx ON jobs (group_key, type, priority DESC, run_after, id) WHERE state = 'ready'`,
  ];
  protected readonly downSql = [
    `DROP INDEX jobs_ready_group_idx`,
    `CREATE INDEX jobs_ready_group_idx ON jobs (group_key, type, priority DESC, id, run_after) WHERE state = 'ready'`,
    `DROP INDEX jobs_ready_idx`,
    `CREATE INDEX jobs_ready_idx ON jobs (type, priority DESC, id, run_after) WHERE state = 'ready'`,
  ];
}
