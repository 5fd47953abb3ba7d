import { JobQueueMigration } from '../job-queue-migration';

/**
 * `job_queue_ticker`: since when some worker process of the cluster has been ticking the
 * recurring schedules without a break. A slot is judged missed against that start, the same for
 * every process: judged against each process's own start, two replicas that began ticking a
 * second apart took the schedules of one tick between them and skipped different slots, and a
 * replica that joined a running cluster treated the backlog it took over as missed. One row,
 * written at most about once a second by the cluster, read once a tick by each process.
 */
export class JobQueueTickerPostgres1769700000001 extends JobQueueMigration {
  readonly version = 43;
  readonly name = 'JobQueueTicker1769700000001';
  protected readonly upSql = [
    `CREATE TABLE job_queue_ticker (
      name varchar(64) PRIMARY KEY,
      ticking_since timestamptz NOT NULL,
      last_contact_at timestamptz NOT NULL
    )`,
    // Contact long ago: the first tick starts a run.
    `INSERT INTO job_queue_ticker (name, ticking_since, last_contact_at) VALUES ('recurring', '1970-01-01T00:00:00Z', '1970-01-01T00:00:00Z')`,
  ];
  protected readonly downSql = [`DROP TABLE job_queue_ticker`];
}
