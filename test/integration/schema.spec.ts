import { DataSource, type DataSourceOptions } from 'typeorm';
import { SchemaOutOfDateError, jobQueueMigrationClasses, jobQueueMigrations, type Dialect } from '../../lib';
import { runJobQueueMigrations } from '../../lib/migrations/migration-runner';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp } from '../support/queue-app';
import type { TestDatabase } from '../support/test-databases';

/** The migration versions each dialect has. */
const VERSIONS: Record<string, number[]> = { postgres: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47], mysql: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31], sqlite: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27] };

describeDialects('schema and migrations', (db) => {
  it('creates the tables and indexes at start-up, and a second start applies nothing', async () => {
    // Three processes' worth of concurrent start-ups must not trip over each other.
    const apps = await Promise.all([startQueueApp(db), startQueueApp(db), startQueueApp(db)]);
    try {
      const app = apps[0];
      const history = await app.rows(`SELECT version, name FROM job_queue_migrations`);
      expect(history.map((r) => Number(r.version)).sort((a, b) => a - b)).toEqual(VERSIONS[db.dialect]);
      expect(await runJobQueueMigrations(app.dataSource, db.dialect)).toEqual([]);

      const indexes = await indexNames(app.rows, db.dialect);
      expect(indexes).toEqual(
        expect.arrayContaining(['jobs_ready_idx', 'jobs_ready_group_idx', db.dialect === 'postgres' ? 'jobs_parent_id_idx' : 'jobs_parent_idx', 'job_deps_depends_on_idx', 'jobs_job_key_uq']),
      );
      // find(): keyset pages per state, type and group; argsContains on PostgreSQL; a schedule's
      // slot jobs on PostgreSQL and SQLite (MySQL/MariaDB reads the key's unique index).
      // PostgreSQL's leave out in-flight rows (migration 12) and add argsContains (GIN).
      expect(indexes).toEqual(
        expect.arrayContaining(
          db.dialect === 'postgres'
            ? ['jobs_find_state_idx', 'jobs_find_type_idx', 'jobs_find_group_idx', 'jobs_find_args_idx', 'jobs_find_schedule_idx']
            : db.dialect === 'sqlite'
              ? ['jobs_state_id_idx', 'jobs_type_id_idx', 'jobs_group_id_idx', 'jobs_find_schedule_idx']
              : ['jobs_state_id_idx', 'jobs_type_id_idx', 'jobs_group_id_idx'],
        ),
      );
      if (db.dialect === 'sqlite') {
        const [{ journal_mode }] = await app.rows(`PRAGMA journal_mode`);
        expect(journal_mode).toBe('wal');
      }
      if (db.dialect === 'postgres') {
        const [{ indexdef }] = await app.rows(`SELECT indexdef FROM pg_indexes WHERE indexname = 'jobs_ready_idx'`);
        expect(indexdef).toMatch(/\(type, priority DESC, run_after, id\) WHERE \(\(state\)::text = 'ready'::text\)/);
        const [group] = await app.rows(`SELECT indexdef FROM pg_indexes WHERE indexname = 'jobs_ready_group_idx'`);
        expect(group.indexdef).toMatch(/\(group_key, type, priority DESC, run_after, id\) WHERE/);
        const [jump] = await app.rows(`SELECT indexdef FROM pg_indexes WHERE indexname = 'jobs_ready_type_group_idx'`);
        expect(jump.indexdef).toMatch(/\(type, group_key\) WHERE \(\(state\)::text = 'ready'::text\)/);
      }
      // The ready indexes are in claim order: priority, then due time, then id.
      if (db.dialect === 'mysql') {
        const columns = async (index: string) =>
          (await app.rows(`SELECT column_name AS c FROM information_schema.statistics WHERE table_schema = DATABASE() AND index_name = '${index}' ORDER BY seq_in_index`)).map((r) => r.c);
        expect(await columns('jobs_ready_idx')).toEqual(['state', 'type', 'neg_priority', 'run_after', 'id']);
        expect(await columns('jobs_ready_group_idx')).toEqual(['state', 'group_key', 'type', 'neg_priority', 'run_after', 'id']);
        // The walk's jumps (migration 30): the type while ready, NULL once claimed.
        expect(await columns('jobs_ready_type_group_idx')).toEqual(['ready_type', 'group_key']);
        const [{ expr }] = await app.rows(
          `SELECT generation_expression AS expr FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'jobs' AND column_name = 'ready_type'`,
        );
        expect(String(expr).replace(/`/g, '')).toMatch(/if\(state = 'ready',\s*type,\s*NULL\)/i);
      }
      if (db.dialect === 'sqlite') {
        const [{ sql: ready }] = await app.rows(`SELECT sql FROM sqlite_master WHERE name = 'jobs_ready_idx'`);
        expect(ready).toMatch(/\(type, priority DESC, run_after, id\) WHERE state = 'ready'/);
        const [{ sql: group }] = await app.rows(`SELECT sql FROM sqlite_master WHERE name = 'jobs_ready_group_idx'`);
        expect(group).toMatch(/\(group_key, type, priority DESC, run_after, id\) WHERE state = 'ready'/);
        const [{ sql: jump }] = await app.rows(`SELECT sql FROM sqlite_master WHERE name = 'jobs_ready_type_group_idx'`);
        expect(jump).toMatch(/\(type, group_key\) WHERE state = 'ready'/);
      }
    } finally {
      await Promise.all(apps.map((a) => a.close()));
    }
  });

  it('steps every migration down and up again (newest first)', async () => {
    const app = await startQueueApp(db, { worker: false, externalTypes: ['anything'] });
    const runner = app.dataSource.createQueryRunner();
    const migrations = jobQueueMigrations(db.dialect);
    try {
      // Down to the first version's schema and back: each down undoes exactly its own up.
      for (const m of [...migrations].reverse().slice(0, -1)) await m.down(runner);
      for (const m of migrations.slice(1)) await m.up(runner);
      await app.queue.enqueue({ type: 'anything' });
      expect(await app.count(`state = 'ready'`)).toBe(1);
    } finally {
      await runner.release();
      await app.close();
    }
  });

  it('keeps job_deps without foreign keys on PostgreSQL and MariaDB; their down drops edges to missing jobs first', async () => {
    const app = await startQueueApp(db, { worker: false, externalTypes: ['anything'] });
    const runner = app.dataSource.createQueryRunner();
    try {
      const ids = await app.queue.enqueueGraph([
        { ref: 'up', type: 'anything' },
        { ref: 'down', type: 'anything', dependsOn: ['up'] },
        { ref: 'other', type: 'anything', dependsOn: ['down'] },
      ]);
      // An edge is not checked against its jobs (no lock per edge): one deleted by hand stays
      // where the keys would have cascaded. SQLite keeps its keys (rebuilding the table is not
      // worth what a check costs there).
      await app.rows(`DELETE FROM jobs WHERE id = ${ids.up}`);
      const edges = async () => Number((await app.rows(`SELECT COUNT(*) AS n FROM job_deps`))[0].n);
      expect(await edges()).toBe(db.dialect === 'sqlite' ? 1 : 2);
      if (db.dialect === 'sqlite') return;
      expect(await foreignKeys(app.rows, db.dialect)).toBe(0);

      const noKeys = jobQueueMigrations(db.dialect).find((m) => m.name === 'JobQueueDepsWithoutForeignKeys1768400000001')!;
      await noKeys.down(runner);
      expect(await foreignKeys(app.rows, db.dialect)).toBe(2);
      expect(await edges()).toBe(1);
      await expect(app.rows(`INSERT INTO job_deps (job_id, depends_on_id) VALUES (${ids.other}, ${ids.up})`)).rejects.toThrow(/foreign key/i);
      await noKeys.up(runner);
      expect(await foreignKeys(app.rows, db.dialect)).toBe(0);
    } finally {
      await runner.release();
      await app.close();
    }
  });

  it('leaves the schema alone when runMigrations is false', async () => {
    const app = await startQueueApp(db, { runMigrations: false });
    try {
      expect(Number((await app.rows(`SELECT COUNT(*) AS n FROM job_queue_migrations`))[0].n)).toBe(VERSIONS[db.dialect].length);
    } finally {
      await app.close();
    }
  });
});

describeDialects('schema check with runMigrations: false', (db) => {
  const last = () => jobQueueMigrations(db.dialect).at(-1)!;
  // PostgreSQL and MySQL share the application's DataSource, so its own table name is read;
  // SQLite always opens its own handle, which looks in TypeORM's default table.
  const table = db.dialect === 'sqlite' ? 'migrations' : 'app_migrations';

  it('refuses an empty database with SchemaOutOfDateError and creates nothing', async () => {
    const err = await startQueueApp(db, { runMigrations: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaOutOfDateError);
    expect((err as SchemaOutOfDateError).missing.map((m) => m.version)).toEqual(VERSIONS[db.dialect]);
    expect((err as SchemaOutOfDateError).message).toContain('runMigrations is false');
    expect(await withAppDataSource(db, table, tableNames)).toEqual([]);
  });

  it('starts on a schema the application migrated with TypeORM, and names the one migration it then lacks', async () => {
    await withAppDataSource(db, table, (ds) => ds.runMigrations());
    const start = () => withAppDataSource(db, table, async (ds) => {
      const app = await startQueueApp(db, {
        runMigrations: false,
        worker: false,
        externalTypes: ['anything'],
        ...(db.dialect === 'sqlite' ? {} : { dataSource: ds }),
      });
      try {
        const before = await app.count(`state = 'ready'`);
        await app.queue.enqueue({ type: 'anything' });
        expect(await app.count(`state = 'ready'`)).toBe(before + 1);
      } finally {
        await app.close();
      }
    });
    await start();
    expect(await withAppDataSource(db, table, tableNames)).not.toContain('job_queue_migrations');

    const forget = await withAppDataSource(db, table, async (ds) => {
      const [row] = await ds.query(`SELECT timestamp, name FROM ${table} WHERE name = '${last().name}'`);
      await ds.query(`DELETE FROM ${table} WHERE name = '${last().name}'`);
      return row as { timestamp: number; name: string };
    });
    const err = await start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaOutOfDateError);
    expect((err as SchemaOutOfDateError).missing).toEqual([{ version: last().version, name: last().name }]);
    expect((err as SchemaOutOfDateError).message).toContain(`TypeORM's "${table}" table`);

    await withAppDataSource(db, table, (ds) =>
      ds.query(`INSERT INTO ${table} (timestamp, name) VALUES (${Number(forget.timestamp)}, '${forget.name}')`),
    );
    await start();
  });
});

describeDialects('schema check after the queue migrated itself', (db) => {
  it('names the version job_queue_migrations lost, writes nothing, and starts once it is recorded again', async () => {
    const app = await startQueueApp(db, { worker: false, externalTypes: ['anything'] });
    try {
      const { version, name } = jobQueueMigrations(db.dialect).at(-1)!;
      await app.rows(`DELETE FROM job_queue_migrations WHERE version = ${version}`);

      const err = await startQueueApp(db, { runMigrations: false }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SchemaOutOfDateError);
      expect((err as SchemaOutOfDateError).missing).toEqual([{ version, name }]);
      expect((err as SchemaOutOfDateError).message).toContain(`TypeORM's "migrations" table`);
      const recorded = await app.rows(`SELECT version FROM job_queue_migrations`);
      expect(recorded.map((r) => Number(r.version)).sort((a, b) => a - b)).toEqual(VERSIONS[db.dialect].slice(0, -1));

      const appliedAt = db.dialect === 'postgres' ? 'now()' : db.dialect === 'mysql' ? 'UTC_TIMESTAMP(3)' : `strftime('%Y-%m-%d %H:%M:%f', 'now')`;
      await app.rows(`INSERT INTO job_queue_migrations (version, name, applied_at) VALUES (${version}, '${name}', ${appliedAt})`);
      const checked = await startQueueApp(db, { runMigrations: false });
      await checked.close();
    } finally {
      await app.close();
    }
  });
});

/** A DataSource the way an application would open it, with our migrations in its list. */
async function withAppDataSource<T>(db: TestDatabase, migrationsTableName: string, work: (ds: DataSource) => Promise<T>): Promise<T> {
  const common = { migrations: jobQueueMigrationClasses(db.dialect), migrationsTableName };
  const options: Record<Dialect, DataSourceOptions> = {
    postgres: { type: 'postgres', url: db.location, ...common },
    mysql: { type: 'mysql', url: db.location, timezone: 'Z', charset: 'utf8mb4_bin', ...common },
    sqlite: { type: 'better-sqlite3', database: db.location, ...common },
  };
  const ds = new DataSource(options[db.dialect]);
  await ds.initialize();
  try {
    return await work(ds);
  } finally {
    await ds.destroy();
  }
}

async function tableNames(ds: DataSource): Promise<string[]> {
  const q: Record<string, string> = {
    postgres: `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'`,
    mysql: `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()`,
    sqlite: `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`,
  };
  return ((await ds.query(q[ds.options.type === 'better-sqlite3' ? 'sqlite' : ds.options.type])) as Array<{ name: string }>).map((r) => r.name);
}

async function indexNames(rows: (q: string) => Promise<Record<string, unknown>[]>, dialect: string): Promise<string[]> {
  const q =
    dialect === 'postgres'
      ? `SELECT indexname AS name FROM pg_indexes WHERE tablename IN ('jobs', 'job_deps')`
      : dialect === 'mysql'
        ? `SELECT DISTINCT index_name AS name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name IN ('jobs', 'job_deps')`
        : `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('jobs', 'job_deps')`;
  return (await rows(q)).map((r) => String(r.name));
}

/** Foreign keys on job_deps (PostgreSQL, MySQL). */
async function foreignKeys(rows: (q: string) => Promise<Array<Record<string, unknown>>>, dialect: Dialect): Promise<number> {
  const [{ n }] =
    dialect === 'postgres'
      ? await rows(`SELECT COUNT(*) AS n FROM pg_constraint WHERE conrelid = 'job_deps'::regclass AND contype = 'f'`)
      : await rows(`SELECT COUNT(*) AS n FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE() AND TABLE_NAME = 'job_deps'`);
  return Number(n);
}
