import type { QueryRunner } from 'typeorm';
import { JobQueueMigration } from '../job-queue-migration';

/**
 * The small columns first, `last_error`, `result` and `args` last. SQLite stores a row as one
 * record in column order and spills what does not fit a page share into a chain of overflow
 * pages, so with `args` and `result` near the front every read of `state`, a time or a key
 * walked the chain of the large values first, and every update re-read them. Measured on a
 * table of this shape with 1 MB args: a read of `state` 578 → 7 µs, a heartbeat's update
 * 5.8 → 0.65 ms (a same-size update now writes only the first page, 4 KB of WAL → 1.3).
 * An update that changes the record's size (a state change) still writes the whole record.
 *
 * SQLite cannot reorder columns in place: the table is rebuilt (copied once, at upgrade), the
 * documented way. `job_deps` is rebuilt with it so that dropping the old `jobs` cascades into
 * nothing while foreign keys are on (a migration runs in a transaction, where the pragma cannot
 * change). Indexes, triggers and views are recreated from their stored text, so one an
 * application added to these tables survives. Ids keep counting from where they were.
 */
export class JobQueueValuesLastSqlite1769100000001 extends JobQueueMigration {
  readonly version = 19;
  readonly name = 'JobQueueValuesLast1769100000001';
  protected readonly upSql = [];
  protected readonly downSql = [];

  override async up(queryRunner: QueryRunner): Promise<void> {
    await rebuildJobsAtomically(queryRunner, 'job_queue_values_last', JOBS_VALUES_LAST);
  }

  // The old order was only slower, never different to a reader: nothing to undo.
  override async down(): Promise<void> {}
}

export const JOBS_VALUES_LAST = `CREATE TABLE jobs_rebuilt (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      state TEXT NOT NULL CHECK (state IN ('waiting', 'ready', 'leased', 'running', 'done', 'failed', 'cancelled')),
      type TEXT NOT NULL,
      group_key TEXT NOT NULL DEFAULT 'default',
      priority INTEGER NOT NULL DEFAULT 0,
      weight INTEGER NOT NULL DEFAULT 1,
      run_after TEXT NOT NULL,
      parent_id INTEGER,
      is_container INTEGER NOT NULL DEFAULT 0,
      pending_deps INTEGER NOT NULL DEFAULT 0,
      pending_children INTEGER NOT NULL DEFAULT 0,
      failed_children INTEGER NOT NULL DEFAULT 0,
      attempts INTEGER NOT NULL DEFAULT 0,
      max_attempts INTEGER NOT NULL DEFAULT 3,
      timeout_ms INTEGER,
      progress INTEGER NOT NULL DEFAULT 0,
      lease_expires TEXT,
      heartbeat_at TEXT,
      created_at TEXT NOT NULL,
      started_at TEXT,
      finished_at TEXT,
      updated_at TEXT NOT NULL,
      lease_owner TEXT,
      ref TEXT,
      job_key TEXT,
      current_stage TEXT,
      trace_context TEXT NULL,
      last_error TEXT,
      result TEXT,
      args TEXT NOT NULL
    )`;

export const JOBS_COLUMNS = [
  'id', 'state', 'type', 'group_key', 'priority', 'weight', 'run_after', 'parent_id', 'is_container', 'pending_deps',
  'pending_children', 'failed_children', 'attempts', 'max_attempts', 'timeout_ms', 'progress', 'lease_expires',
  'heartbeat_at', 'created_at', 'started_at', 'finished_at', 'updated_at', 'lease_owner', 'ref', 'job_key',
  'current_stage', 'trace_context', 'last_error', 'result', 'args',
].join(', ');

const DEPS_REBUILT = `CREATE TABLE job_deps_rebuilt (
      job_id INTEGER NOT NULL REFERENCES jobs_rebuilt (id) ON DELETE CASCADE,
      depends_on_id INTEGER NOT NULL REFERENCES jobs_rebuilt (id) ON DELETE CASCADE,
      PRIMARY KEY (job_id, depends_on_id)
    ) WITHOUT ROWID`;

/**
 * rebuildJobs all or nothing, also when an application runs migrations outside a transaction
 * (TypeORM's migrationsTransactionMode 'none'): a savepoint there is a transaction of its own.
 */
export async function rebuildJobsAtomically(qr: QueryRunner, savepoint: string, createJobs: string, columns = JOBS_COLUMNS): Promise<void> {
  await qr.query(`SAVEPOINT ${savepoint}`);
  try {
    await rebuildJobs(qr, createJobs, columns);
  } catch (err) {
    await qr.query(`ROLLBACK TO ${savepoint}`).catch(() => undefined);
    throw err;
  } finally {
    await qr.query(`RELEASE ${savepoint}`).catch(() => undefined);
  }
}

/**
 * Rebuilds `jobs` (and `job_deps`, which references it) with the table text given, copying
 * `columns` (the old table's; a column only the new text has takes its default).
 */
async function rebuildJobs(qr: QueryRunner, createJobs: string, columns = JOBS_COLUMNS): Promise<void> {
  // Everything that names either table, to recreate after: the tables' own indexes, and every
  // trigger and view (a rename checks them all, and one naming the dropped table would fail it).
  const dependents: Array<{ type: string; name: string; sql: string }> = await qr.query(
    `SELECT type, name, sql FROM sqlite_master
      WHERE sql IS NOT NULL AND (type IN ('trigger', 'view') OR (type = 'index' AND tbl_name IN ('jobs', 'job_deps')))
      ORDER BY CASE type WHEN 'index' THEN 0 WHEN 'view' THEN 1 ELSE 2 END, rowid`,
  );
  for (const d of dependents) if (d.type !== 'index') await qr.query(`DROP ${d.type.toUpperCase()} "${d.name.replace(/"/g, '""')}"`);

  await qr.query(createJobs);
  await qr.query(`INSERT INTO jobs_rebuilt (${columns}) SELECT ${columns} FROM jobs ORDER BY id`);
  // Ids are never reused: the counter goes on from the old table's, which can be past max(id).
  await qr.query(`DELETE FROM sqlite_sequence WHERE name = 'jobs_rebuilt'`);
  await qr.query(
    `INSERT INTO sqlite_sequence (name, seq)
     SELECT 'jobs_rebuilt', MAX(seq) FROM (SELECT seq FROM sqlite_sequence WHERE name = 'jobs' UNION ALL SELECT MAX(id) FROM jobs_rebuilt)
     HAVING MAX(seq) IS NOT NULL`,
  );
  await qr.query(DEPS_REBUILT);
  await qr.query(`INSERT INTO job_deps_rebuilt (job_id, depends_on_id) SELECT job_id, depends_on_id FROM job_deps`);
  await qr.query(`DROP TABLE job_deps`);
  await qr.query(`DROP TABLE jobs`);
  // The rename also points job_deps_rebuilt's keys at the new name.
  await qr.query(`ALTER TABLE jobs_rebuilt RENAME TO jobs`);
  await qr.query(`ALTER TABLE job_deps_rebuilt RENAME TO job_deps`);
  for (const d of dependents) await qr.query(d.sql);
}
