import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueTraceContextSqlite1767100000001 extends JobQueueMigration {
  readonly version = 9;
  readonly name = 'JobQueueTraceContext1767100000001';
  protected readonly upSql = [
    // Tracing (nestjs-sql-job-queue/tracing): the enqueue's trace context, then the completed
    // attempt's, for the job's attempts and its dependents to link to. NULL without tracing;
    // a nullable column without a default is a catalog-only change on every engine here.
    `ALTER TABLE jobs ADD COLUMN trace_context TEXT NULL`,
  ];
  protected readonly downSql = [`ALTER TABLE jobs DROP COLUMN trace_context`];
}
