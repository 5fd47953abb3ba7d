import { JobQueueMigration } from '../job-queue-migration';

/**
 * `job_deps.allow_failure`: an edge a dependent waits on without needing it to succeed
 * (`dependsOn: [{ job, allowFailure: true }]`): the upstream failing or being cancelled counts
 * the dependent down like a completion instead of cancelling it. On the archived edges too, so an
 * archived graph keeps its meaning. A constant default: no table rewrite, and the edges of before
 * keep today's meaning (0, a failure cancels). The failure cascade finds such edges through their
 * own partial index (nearly empty: most edges are strict) and reads the others as before, from
 * `(depends_on_id, job_id)` alone: reading the column with every edge cost a 1 → 100,000 cancel 8%.
 */
export class JobQueueAllowFailurePostgres1769600000001 extends JobQueueMigration {
  readonly version = 42;
  readonly name = 'JobQueueAllowFailure1769600000001';
  protected readonly upSql = [
    `ALTER TABLE job_deps ADD COLUMN IF NOT EXISTS allow_failure smallint NOT NULL DEFAULT 0`,
    `ALTER TABLE job_deps_archive ADD COLUMN IF NOT EXISTS allow_failure smallint NOT NULL DEFAULT 0`,
    // The build reads all of job_deps under a lock that holds enqueues of graphs: on a large
    // table, run these first (the ALTERs are instant), and this migration finds them done:
    //   ALTER TABLE job_deps ADD COLUMN IF NOT EXISTS allow_failure smallint NOT NULL DEFAULT 0;
    //   CREATE INDEX CONCURRENTLY job_deps_lenient_idx ON job_deps (depends_on_id) WHERE allow_failure = 1;
    `CREATE INDEX IF NOT EXISTS job_deps_lenient_idx ON job_deps (depends_on_id) WHERE allow_failure = 1`,
  ];
  protected readonly downSql = [
    `DROP INDEX job_deps_lenient_idx`,
    `ALTER TABLE job_deps_archive DROP COLUMN allow_failure`,
    `ALTER TABLE job_deps DROP COLUMN allow_failure`,
  ];
}
