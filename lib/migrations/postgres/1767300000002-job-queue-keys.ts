import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueKeysPostgres1767300000002 extends JobQueueMigration {
  readonly version = 17;
  readonly name = 'JobQueueKeys1767300000002';
  protected readonly upSql = [
    // One row per key enqueued in mode unfinished / debounce / throttle: locked by such an
    // enqueue so that concurrent ones take turns; holds the end of a throttle window.
    `CREATE TABLE job_queue_keys (job_key varchar(255) PRIMARY KEY, window_ends_ms bigint)`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_keys`];
}
