import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueInitMysql1764403200000 extends JobQueueMigration {
  readonly version = 1;
  readonly name = 'JobQueueInit1764403200000';
  protected readonly upSql = [
    // No partial indexes here: `state` leads each claim index instead. `neg_priority` lets one
    // ascending index serve `ORDER BY priority DESC, id` (MariaDB < 10.8 ignores DESC in indexes),
    // so InnoDB walks the index in order and SKIP LOCKED never sorts (and locks) every match.
    `CREATE TABLE jobs (
      id BIGINT NOT NULL AUTO_INCREMENT,
      type VARCHAR(200) NOT NULL,
      ref VARCHAR(200) NULL,
      args LONGTEXT NOT NULL,
      result LONGTEXT NULL,
      state VARCHAR(16) NOT NULL,
      parent_id BIGINT NULL,
      is_container TINYINT NOT NULL DEFAULT 0,
      pending_deps INT NOT NULL DEFAULT 0,
      pending_children INT NOT NULL DEFAULT 0,
      failed_children INT NOT NULL DEFAULT 0,
      group_key VARCHAR(200) NOT NULL DEFAULT 'default',
      weight INT NOT NULL DEFAULT 1,
      priority INT NOT NULL DEFAULT 0,
      neg_priority INT AS (-priority) VIRTUAL,
      lease_owner VARCHAR(128) NULL,
      lease_expires DATETIME(3) NULL,
      heartbeat_at DATETIME(3) NULL,
      run_after DATETIME(3) NOT NULL,
      attempts INT NOT NULL DEFAULT 0,
      max_attempts INT NOT NULL DEFAULT 3,
      last_error TEXT NULL,
      timeout_ms INT NULL,
      progress SMALLINT NOT NULL DEFAULT 0,
      current_stage VARCHAR(200) NULL,
      job_key VARCHAR(255) NULL,
      created_at DATETIME(3) NOT NULL,
      started_at DATETIME(3) NULL,
      finished_at DATETIME(3) NULL,
      updated_at DATETIME(3) NOT NULL,
      PRIMARY KEY (id),
      UNIQUE KEY jobs_job_key_uq (job_key),
      KEY jobs_ready_idx (state, neg_priority, id),
      KEY jobs_ready_group_idx (state, group_key, neg_priority, id),
      KEY jobs_in_flight_idx (state, lease_expires),
      KEY jobs_parent_idx (parent_id),
      CONSTRAINT jobs_state_check CHECK (state IN ('waiting', 'ready', 'leased', 'running', 'done', 'failed', 'cancelled'))
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
    `CREATE TABLE job_deps (
      job_id BIGINT NOT NULL,
      depends_on_id BIGINT NOT NULL,
      PRIMARY KEY (job_id, depends_on_id),
      KEY job_deps_depends_on_idx (depends_on_id),
      CONSTRAINT job_deps_job_fk FOREIGN KEY (job_id) REFERENCES jobs (id) ON DELETE CASCADE,
      CONSTRAINT job_deps_depends_on_fk FOREIGN KEY (depends_on_id) REFERENCES jobs (id) ON DELETE CASCADE
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
  ];
  protected readonly downSql = [`DROP TABLE job_deps`, `DROP TABLE jobs`];
}
