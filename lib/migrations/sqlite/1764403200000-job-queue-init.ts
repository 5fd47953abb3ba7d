import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueInitSqlite1764403200000 extends JobQueueMigration {
  readonly version = 1;
  readonly name = 'JobQueueInit1764403200000';
  protected readonly upSql = [
    // AUTOINCREMENT: ids are never reused after the retention sweep deletes old rows.
    // Times are UTC text 'YYYY-MM-DD HH:MM:SS.SSS'.
    `CREATE TABLE jobs (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      type TEXT NOT NULL,
      ref TEXT,
      args TEXT NOT NULL,
      result TEXT,
      state TEXT NOT NULL CHECK (state IN ('waiting', 'ready', 'leased', 'running', 'done', 'failed', 'cancelled')),
      parent_id INTEGER,
      is_container INTEGER NOT NULL DEFAULT 0,
      pending_deps INTEGER NOT NULL DEFAULT 0,
      pending_children INTEGER NOT NULL DEFAULT 0,
      failed_children INTEGER NOT NULL DEFAULT 0,
      group_key TEXT NOT NULL DEFAULT 'default',
      weight INTEGER NOT NULL DEFAULT 1,
      priority INTEGER NOT NULL DEFAULT 0,
      lease_owner TEXT,
      lease_expires TEXT,
      heartbeat_at TEXT,
      run_after TEXT NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      max_attempts INTEGER NOT NULL DEFAULT 3,
      last_error TEXT,
      timeout_ms INTEGER,
      progress INTEGER NOT NULL DEFAULT 0,
      current_stage TEXT,
      job_key TEXT,
      created_at TEXT NOT NULL,
      started_at TEXT,
      finished_at TEXT,
      updated_at TEXT NOT NULL
    )`,
    `CREATE UNIQUE INDEX jobs_job_key_uq ON jobs (job_key)`,
    `CREATE INDEX jobs_ready_idx ON jobs (priority DESC, id) WHERE state = 'ready'`,
    `CREATE INDEX jobs_ready_group_idx ON jobs (group_key, priority DESC, id) WHERE state = 'ready'`,
    `CREATE INDEX jobs_in_flight_idx ON jobs (lease_expires) WHERE state IN ('leased', 'running')`,
    `CREATE INDEX jobs_parent_idx ON jobs (parent_id) WHERE parent_id IS NOT NULL`,
    `CREATE TABLE job_deps (
      job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
      depends_on_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
      PRIMARY KEY (job_id, depends_on_id)
    ) WITHOUT ROWID`,
    `CREATE INDEX job_deps_depends_on_idx ON job_deps (depends_on_id)`,
  ];
  protected readonly downSql = [`DROP TABLE job_deps`, `DROP TABLE jobs`];
}
