import { JobQueueMigration } from '../job-queue-migration';

/**
 * `job_deps.allow_failure`: an edge a dependent waits on without needing it to succeed
 * (`dependsOn: [{ job, allowFailure: true }]`): the upstream failing or being cancelled counts
 * the dependent down like a completion instead of cancelling it. On the archived edges too, so an
 * archived graph keeps its meaning. A constant default: no table rewrite, and the edges of before
 * keep today's meaning (0, a failure cancels).
 */
export class JobQueueAllowFailurePostgres1769600000001 extends JobQueueMigration {
  readonly version = 42;
  readonly name = 'JobQueueAllowFailure1769600000001';
  protected readonly upSql = [
    `ALTER TABLE job_deps ADD COLUMN allow_failure smallint NOT NULL DEFAULT 0`,
    `ALTER TABLE job_deps_archive ADD COLUMN allow_failure smallint NOT NULL DEFAULT 0`,
  ];
  protected readonly downSql = [`ALTER TABLE job_deps_archive DROP COLUMN allow_failure`, `ALTER TABLE job_deps DROP COLUMN allow_failure`];
}
