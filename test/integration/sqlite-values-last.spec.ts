import { Injectable } from '@nestjs/common';
import Database from 'better-sqlite3';
import { dirname, join } from 'node:path';
import { JobHandler, jobQueueMigrations } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp } from '../support/queue-app';

@Injectable()
class Handlers {
  @JobHandler('t')
  async t(args: { i: number }): Promise<{ i: number }> {
    return { i: args.i };
  }
}

/** The same columns in both layouts, by name. */
const COLUMNS =
  'id, type, ref, args, result, state, parent_id, is_container, pending_deps, pending_children, failed_children, group_key, weight, priority, lease_owner, lease_expires, heartbeat_at, run_after, attempts, max_attempts, last_error, timeout_ms, progress, current_stage, job_key, created_at, started_at, finished_at, updated_at, trace_context';
const NOW = '2026-12-05 09:00:00.000';
const CHAIN = 300;
const BIG = 'x'.repeat(1024 * 1024);
const RAN = CHAIN / 3;

/** A SQLite file at version 18, built by the shipped migrations, holding a half-run chain. */
async function version18(path: string) {
  const file = new Database(path);
  file.pragma('journal_mode = WAL');
  file.pragma('foreign_keys = ON');
  const runner = sqliteRunner(file);
  const shipped = jobQueueMigrations('sqlite');
  expect(shipped.map((m) => m.version)).toContain(19);
  file.exec(`CREATE TABLE job_queue_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  for (const m of shipped.filter((m) => m.version < 19)) {
    await m.up(runner as never);
    file.prepare(`INSERT INTO job_queue_migrations VALUES (?, ?, ?)`).run(m.version, m.name, NOW);
  }
  expect(columnsOf(file).indexOf('args')).toBeLessThan(columnsOf(file).indexOf('state'));

  // A chain whose first RAN links ran, keyed and big rows, and a deleted newest id.
  const insert = file.prepare(
    `INSERT INTO jobs (type, ref, args, result, state, pending_deps, group_key, run_after, attempts, last_error, job_key, created_at, started_at, finished_at, updated_at, trace_context)
     VALUES ('t', @ref, @args, @result, @state, @pending, @group, '${NOW}', @attempts, @error, @key, '${NOW}', @started, @finished, '${NOW}', @trace)`,
  );
  file.transaction(() => {
    for (let i = 0; i < CHAIN; i++) {
      const done = i < RAN;
      insert.run({
        ref: `r${i}`,
        args: i === 7 ? JSON.stringify({ i, big: BIG }) : JSON.stringify({ i }),
        result: done ? JSON.stringify(i === 5 ? { i, big: BIG } : { i }) : null,
        state: done ? 'done' : i === RAN ? 'ready' : 'waiting',
        pending: done || i === RAN ? 0 : 1,
        group: `g${i % 7}`,
        attempts: done ? 1 : 0,
        error: i === 3 ? 'first attempt failed' : null,
        key: i % 50 === 0 ? `key-${i}` : null,
        started: done ? NOW : null,
        finished: done ? NOW : null,
        trace: i === 9 ? '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' : null,
      });
    }
    for (let i = 2; i <= CHAIN; i++) file.prepare(`INSERT INTO job_deps (job_id, depends_on_id) VALUES (?, ?)`).run(i, i - 1);
    file.prepare(`INSERT INTO jobs (type, args, state, run_after, created_at, updated_at) VALUES ('t', '{}', 'ready', '${NOW}', '${NOW}', '${NOW}')`).run();
    file.prepare(`DELETE FROM jobs WHERE id = ?`).run(CHAIN + 1);
  })();
  // What an application may have added to the queue's tables.
  file.exec(`CREATE INDEX app_jobs_tenant_idx ON jobs (json_extract(args, '$.tenant'))`);
  file.exec(`CREATE TABLE app_audit (job_id INTEGER NOT NULL)`);
  file.exec(`CREATE TRIGGER app_jobs_done AFTER UPDATE OF state ON jobs WHEN new.state = 'done' BEGIN INSERT INTO app_audit (job_id) VALUES (new.id); END`);
  file.exec(`CREATE VIEW app_waiting AS SELECT id FROM jobs WHERE state = 'waiting'`);
  const before = snapshot(file);
  expect(before.jobs).toHaveLength(CHAIN);
  expect(before.waiting).toEqual({ n: CHAIN - RAN - 1 });
  expect(file.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'jobs'`).get()).toEqual({ seq: CHAIN + 1 });
  return { file, before };
}

/** What migrations call on a TypeORM QueryRunner, on better-sqlite3 directly. */
function sqliteRunner(file: Database.Database, fail?: RegExp) {
  return {
    query: async (text: string, params: unknown[] = []) => {
      if (fail?.test(text)) throw new Error(`injected failure at: ${text}`);
      const statement = file.prepare(text);
      return statement.reader ? statement.all(...params) : (statement.run(...params), []);
    },
  };
}

const columnsOf = (file: Database.Database) => (file.pragma('table_info(jobs)') as Array<{ name: string }>).map((c) => c.name);

function snapshot(file: Database.Database) {
  return {
    jobs: file.prepare(`SELECT ${COLUMNS} FROM jobs ORDER BY id`).all(),
    deps: file.prepare(`SELECT job_id, depends_on_id FROM job_deps ORDER BY job_id, depends_on_id`).all(),
    indexes: file.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('jobs', 'job_deps') ORDER BY name`).all(),
    others: file.prepare(`SELECT type, name, sql FROM sqlite_master WHERE type IN ('trigger', 'view') ORDER BY name`).all(),
    keys: file.pragma('foreign_key_list(job_deps)'),
    seq: file.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'jobs'`).get(),
    waiting: file.prepare(`SELECT COUNT(*) AS n FROM app_waiting`).get(),
  };
}


/**
 * Migration 19 rebuilds SQLite's `jobs` with the large values last (reads of the small columns
 * no longer walk their overflow pages). It runs here on a populated database at version 18, built
 * by the shipped migrations 1–18: every row and edge must come through unchanged, ids keep
 * counting past the old table's, the keys still cascade, an application's own index, trigger and
 * view survive, and a half-run chain then runs to the end.
 */
describeDialects(
  'SQLite jobs rebuilt with the large values last (migration 19)',
  (db) => {
    it('upgrades a populated version-18 database in place, and its graphs run on', async () => {
      const { file, before } = await version18(db.location);

      // The module applies migration 19 at start-up and runs the rest of the chain.
      const app = await startQueueApp(db, { concurrency: 4, pollIntervalMs: 200 }, [Handlers]);
      try {
        expect(columnsOf(file).slice(-3)).toEqual(['last_error', 'result', 'args']);
        expect(columnsOf(file).indexOf('trace_context')).toBeLessThan(columnsOf(file).indexOf('last_error'));
        // Migration 22 rebuilt it again with `snoozes` among the small columns (ADD COLUMN appends).
        expect(columnsOf(file).indexOf('snoozes')).toBeGreaterThan(-1);
        expect(columnsOf(file).indexOf('snoozes')).toBeLessThan(columnsOf(file).indexOf('last_error'));
        const after = snapshot(file);
        expect(after.jobs.slice(0, RAN)).toEqual(before.jobs.slice(0, RAN));
        expect(after.deps.length).toBe(before.deps.length);
        // Every index of version 18 survives the rebuild; migrations 24, 26 and 27 (later in the chain) add one each.
        const added = [
          { name: 'job_deps_lenient_idx', sql: 'CREATE INDEX job_deps_lenient_idx ON job_deps (depends_on_id) WHERE allow_failure = 1' },
          {
            name: 'jobs_find_schedule_idx',
            sql: "CREATE INDEX jobs_find_schedule_idx ON jobs (substr(job_key, 1, length(job_key) - 25), id) WHERE substr(job_key, 1, 10) = 'recurring:'",
          },
          { name: 'jobs_ready_type_group_idx', sql: "CREATE INDEX jobs_ready_type_group_idx ON jobs (type, group_key) WHERE state = 'ready'" },
        ];
        expect(after.indexes).toEqual([...before.indexes, ...added].sort((a, b) => (a as { name: string }).name.localeCompare((b as { name: string }).name)));
        // The app's own views and triggers kept; migration 20 (after 19 in the chain) adds its triggers on job_queue_paused.
        expect(after.others.filter((o) => !String((o as { name: string }).name).startsWith('job_queue_paused_'))).toEqual(before.others);
        expect(after.keys).toEqual(before.keys);
        expect(file.pragma('foreign_key_check')).toEqual([]);
        expect(file.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
        expect(file.prepare(`SELECT name FROM sqlite_master WHERE name IN ('app_jobs_done', 'app_waiting', 'app_jobs_tenant_idx') ORDER BY name`).all()).toEqual([
          { name: 'app_jobs_done' },
          { name: 'app_jobs_tenant_idx' },
          { name: 'app_waiting' },
        ]);

        const { id: next } = await app.queue.enqueue({ type: 't', args: { i: -1 } });
        expect(next).toBe(CHAIN + 2); // never the deleted id again
        await app.queue.waitFor(CHAIN, { timeoutMs: 60_000 });
        const finished = file.prepare(`SELECT ${COLUMNS} FROM jobs WHERE id <= ? ORDER BY id`).all(CHAIN) as Array<Record<string, unknown>>;
        // The rows that had run are as they were; the rest ran in order, once each.
        expect(finished.slice(0, RAN)).toEqual(before.jobs.slice(0, RAN));
        expect(finished.every((j) => j.state === 'done')).toBe(true);
        expect(finished.slice(RAN).map((j) => j.attempts)).toEqual(Array(CHAIN - RAN).fill(1));
        expect(finished.slice(RAN).map((j) => JSON.parse(String(j.result)).i)).toEqual(Array.from({ length: CHAIN - RAN }, (_, k) => RAN + k));
        expect(file.prepare(`SELECT COUNT(*) AS n FROM app_audit WHERE job_id <= ?`).get(CHAIN)).toEqual({ n: CHAIN - RAN });
        expect(file.prepare(`SELECT COUNT(*) AS n FROM app_waiting`).get()).toEqual({ n: 0 });

        // The keys still cascade.
        await app.rows(`DELETE FROM jobs WHERE id = 2`);
        expect(await app.rows(`SELECT job_id, depends_on_id FROM job_deps WHERE 2 IN (job_id, depends_on_id)`)).toEqual([]);
      } finally {
        await app.close();
        file.close();
      }
    }, 120_000);

    it('run by hand outside a transaction, fails whole or not at all', async () => {
      const { file, before } = await version18(join(dirname(db.location), 'by-hand.sqlite'));
      const migration = jobQueueMigrations('sqlite').find((m) => m.version === 19)!;
      try {
        // Past both drops: only the savepoint brings the tables back.
        await expect(migration.up(sqliteRunner(file, /RENAME TO job_deps$/) as never)).rejects.toThrow(/injected failure/);
        expect(file.inTransaction).toBe(false);
        expect(snapshot(file)).toEqual(before);
        expect(columnsOf(file).indexOf('args')).toBeLessThan(columnsOf(file).indexOf('state'));

        await migration.up(sqliteRunner(file) as never);
        expect(file.inTransaction).toBe(false);
        expect(columnsOf(file).slice(-3)).toEqual(['last_error', 'result', 'args']);
        expect(snapshot(file)).toEqual(before);
        expect(file.pragma('foreign_key_check')).toEqual([]);
      } finally {
        file.close();
      }
    }, 60_000);
  },
  ['sqlite'],
);
