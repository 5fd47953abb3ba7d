import { JobQueueMigration } from '../job-queue-migration';

/**
 * `job_deps.allow_failure`: an edge a dependent waits on without needing it to succeed
 * (`dependsOn: [{ job, allowFailure: true }]`), see the PostgreSQL migration of the same name.
 * ADD COLUMN with a constant default is instant on MariaDB 10.3+ and MySQL 8. Only the failure
 * cascade reads it; promotion's counts still read `job_deps_depends_on_idx` alone.
 */
export class JobQueueAllowFailureMysql1769600000001 extends JobQueueMigration {
  readonly version = 27;
  readonly name = 'JobQueueAllowFailure1769600000001';
  protected readonly upSql = [
    `ALTER TABLE job_deps ADD COLUMN allow_failure TINYINT NOT NULL DEFAULT 0`,
    `ALTER TABLE job_deps_archive ADD COLUMN allow_failure TINYINT NOT NULL DEFAULT 0`,
  ];
  protected readonly downSql = [`ALTER TABLE job_deps_archive DROP COLUMN allow_failure`, `ALTER TABLE job_deps DROP COLUMN allow_failure`];
}
