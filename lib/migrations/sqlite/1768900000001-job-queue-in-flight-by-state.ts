import { JobQueueMigration } from '../job-queue-migration';

/**
 * SQLite finds in-flight rows through `jobs_state_id_idx` (state, id) instead of an index of
 * their own. In WAL mode every index a transaction touches is another page written at commit
 * (about 10 µs each here), and `jobs_in_flight_idx` was touched by every claim, every finalize
 * and every heartbeat (it held `lease_expires`, which each renewal rewrites). Its only readers
 * are the reclaim and timeout sweeps, every few seconds, over rows that are few by construction
 * (at most the workers' slots and prefetch): they now read those rows by state.
 */
export class JobQueueInFlightByStateSqlite1768900000001 extends JobQueueMigration {
  readonly version = 17;
  readonly name = 'JobQueueInFlightByState1768900000001';
  protected readonly upSql = [`DROP INDEX jobs_in_flight_idx`];
  protected readonly downSql = [`CREATE INDEX jobs_in_flight_idx ON jobs (lease_expires) WHERE state IN ('leased', 'running')`];
}
