import type { Dialect } from '../job-queue.options';
import type { JobQueueMigration } from './job-queue-migration';
import { JobQueueInitMysql1764403200000 } from './mysql/1764403200000-job-queue-init';
import { JobQueueInitPostgres1764403200000 } from './postgres/1764403200000-job-queue-init';
import { JobQueueInitSqlite1764403200000 } from './sqlite/1764403200000-job-queue-init';
import { JobQueueLimitsMysql1764489600000 } from './mysql/1764489600000-job-queue-limits';
import { JobQueueLimitsPostgres1764489600000 } from './postgres/1764489600000-job-queue-limits';
import { JobQueueLimitsSqlite1764489600000 } from './sqlite/1764489600000-job-queue-limits';

const MIGRATIONS: Record<Dialect, ReadonlyArray<new () => JobQueueMigration>> = {
  postgres: [JobQueueInitPostgres1764403200000, JobQueueLimitsPostgres1764489600000],
  mysql: [JobQueueInitMysql1764403200000, JobQueueLimitsMysql1764489600000],
  sqlite: [JobQueueInitSqlite1764403200000, JobQueueLimitsSqlite1764489600000],
};

/** The schema migrations of one dialect, in order. */
export function jobQueueMigrations(dialect: Dialect): JobQueueMigration[] {
  return MIGRATIONS[dialect].map((Migration) => new Migration());
}

export { JobQueueMigration } from './job-queue-migration';
