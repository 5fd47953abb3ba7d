import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueArchivePostgres1764576000000 extends JobQueueMigration {
  readonly version = 3;
  readonly name = 'JobQueueArchive1764576000000';
  protected readonly upSql = [
    // Same columns as jobs, none of its claim indexes: rows here are history, never claimed.
    `CREATE TABLE jobs_archive (LIKE jobs INCLUDING DEFAULTS, archived_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (id))`,
    `CREATE INDEX jobs_archive_finished_idx ON jobs_archive (finished_at)`,
    `CREATE TABLE job_deps_archive (job_id bigint NOT NULL, depends_on_id bigint NOT NULL, PRIMARY KEY (job_id, depends_on_id))`,
  ];
  protected readonly downSql = [`DROP TABLE job_deps_archive`, `DROP TABLE jobs_archive`];
}
