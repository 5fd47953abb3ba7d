import { JobQueueMigration } from '../job-queue-migration';

export class JobQueueArchiveSqlite1764576000000 extends JobQueueMigration {
  readonly version = 3;
  readonly name = 'JobQueueArchive1764576000000';
  protected readonly upSql = [
    `CREATE TABLE jobs_archive (
      id INTEGER PRIMARY KEY, type TEXT NOT NULL, ref TEXT, args TEXT NOT NULL, result TEXT, state TEXT NOT NULL,
      parent_id INTEGER, is_container INTEGER NOT NULL DEFAULT 0, pending_deps INTEGER NOT NULL DEFAULT 0,
      pending_children INTEGER NOT NULL DEFAULT 0, failed_children INTEGER NOT NULL DEFAULT 0, group_key TEXT NOT NULL,
      weight INTEGER NOT NULL, priority INTEGER NOT NULL, lease_owner TEXT, lease_expires TEXT, heartbeat_at TEXT,
      run_after TEXT NOT NULL, attempts INTEGER NOT NULL, max_attempts INTEGER NOT NULL, last_error TEXT, timeout_ms INTEGER,
      progress INTEGER NOT NULL, current_stage TEXT, job_key TEXT, created_at TEXT NOT NULL, started_at TEXT,
      finished_at TEXT, updated_at TEXT NOT NULL, archived_at TEXT NOT NULL
    )`,
    `CREATE INDEX jobs_archive_finished_idx ON jobs_archive (finished_at)`,
    `CREATE TABLE job_deps_archive (job_id INTEGER NOT NULL, depends_on_id INTEGER NOT NULL, PRIMARY KEY (job_id, depends_on_id)) WITHOUT ROWID`,
  ];
  protected readonly downSql = [`DROP TABLE job_deps_archive`, `DROP TABLE jobs_archive`];
}
