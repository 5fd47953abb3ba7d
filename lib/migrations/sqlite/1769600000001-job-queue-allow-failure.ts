import { JobQueueMigration } from '../job-queue-migration';

/**
 * `job_deps.allow_failure`: an edge a dependent waits on without needing it to succeed
 * (`dependsOn: [{ job, allowFailure: true }]`), see the PostgreSQL migration of the same name.
 * ADD COLUMN with a constant default rewrites nothing. Only the failure cascade reads it, through
 * its own partial index (nearly empty: most edges are strict); promotion's counts and the
 * cascade's other edges still read `job_deps_depends_on_idx` alone.
 */
export class JobQueueAllowFailureSqlite1769600000001 extends JobQueueMigration {
  readonly version = 24;
  readonly name = 'JobQueueAllowFailure1769600000001';
  protected readonly upSql = [
    `ALTER TABLE job_deps ADD COLUMN allow_failure INTEGER NOT NULL DEFAULT 0`,
    `ALTER TABLE job_deps_archive ADD COLUMN allow_failure INTEGER NOT NULL DEFAULT 0`,
    `CREATE INDEX job_deps_lenient_idx ON job_deps (depends_on_id) WHERE allow_failure = 1`,
  ];
  protected readonly downSql = [
    `DROP INDEX job_deps_lenient_idx`,
    `ALTER TABLE job_deps_archive DROP COLUMN allow_failure`,
    `ALTER TABLE job_deps DROP COLUMN allow_failure`,
  ];
}
