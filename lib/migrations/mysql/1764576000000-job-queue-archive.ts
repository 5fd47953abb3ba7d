import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueArchiveMysql1764576000000 extends JobQueueMigration {
  readonly version = 3;
  readonly name = 'JobQueueArchive1764576000000';
  protected readonly upSql = [
    `CREATE TABLE jobs_archive (
      id BIGINT NOT NULL PRIMARY KEY,
      type VARCHAR(200) NOT NULL, ref VARCHAR(200) NULL, args LONGTEXT NOT NULL, result LONGTEXT NULL,
      state VARCHAR(16) NOT NULL, parent_id BIGINT NULL, is_container TINYINT NOT NULL DEFAULT 0,
      pending_deps INT NOT NULL DEFAULT 0, pending_children INT NOT NULL DEFAULT 0, failed_children INT NOT NULL DEFAULT 0,
      group_key VARCHAR(200) NOT NULL, weight INT NOT NULL, priority INT NOT NULL,
      lease_owner VARCHAR(128) NULL, lease_expires DATETIME(3) NULL, heartbeat_at DATETIME(3) NULL, run_after DATETIME(3) NOT NULL,
      attempts INT NOT NULL, max_attempts INT NOT NULL, last_error TEXT NULL, timeout_ms INT NULL, progress SMALLINT NOT NULL,
      current_stage VARCHAR(200) NULL, job_key VARCHAR(255) NULL, created_at DATETIME(3) NOT NULL, started_at DATETIME(3) NULL,
      finished_at DATETIME(3) NULL, updated_at DATETIME(3) NOT NULL, archived_at DATETIME(3) NOT NULL,
      KEY jobs_archive_finished_idx (finished_at)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
    `CREATE TABLE job_deps_archive (job_id BIGINT NOT NULL, depends_on_id BIGINT NOT NULL, PRIMARY KEY (job_id, depends_on_id)) ENGINE=InnoDB`,
  ];
  protected readonly downSql = [`DROP TABLE job_deps_archive`, `DROP TABLE jobs_archive`];
}
