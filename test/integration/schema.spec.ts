import { jobQueueMigrations } from '../../lib';
import { runJobQueueMigrations } from '../../lib/migrations/migration-runner';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp } from '../support/queue-app';

/** The migration versions each dialect has. */
const VERSIONS: Record<string, number[]> = { postgres: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27], mysql: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16], sqlite: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13] };

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
        expect.arrayContaining(['jobs_ready_idx', 'jobs_ready_group_idx', 'jobs_parent_idx', 'job_deps_depends_on_idx', 'jobs_job_key_uq']),
      );
      // find(): keyset pages per state, type and group; argsContains on PostgreSQL.
      // PostgreSQL's leave out in-flight rows (migration 12) and add argsContains (GIN).
      expect(indexes).toEqual(
        expect.arrayContaining(
          db.dialect === 'postgres'
            ? ['jobs_find_state_idx', 'jobs_find_type_idx', 'jobs_find_group_idx', 'jobs_find_args_idx']
            : ['jobs_state_id_idx', 'jobs_type_id_idx', 'jobs_group_id_idx'],
        ),
      );
      if (db.dialect === 'sqlite') {
        const [{ journal_mode }] = await app.rows(`PRAGMA journal_mode`);
        expect(journal_mode).toBe('wal');
      }
      if (db.dialect === 'postgres') {
        const [{ indexdef }] = await app.rows(`SELECT indexdef FROM pg_indexes WHERE indexname = 'jobs_ready_idx'`);
        expect(indexdef).toMatch(/\(type, priority DESC, id\) WHERE \(\(state\)::text = 'ready'::text\)/);
        const [group] = await app.rows(`SELECT indexdef FROM pg_indexes WHERE indexname = 'jobs_ready_group_idx'`);
        expect(group.indexdef).toMatch(/\(group_key, type, priority DESC, id\) WHERE/);
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

  it('leaves the schema alone when runMigrations is false', async () => {
    const app = await startQueueApp(db, { runMigrations: false });
    try {
      expect(Number((await app.rows(`SELECT COUNT(*) AS n FROM job_queue_migrations`))[0].n)).toBe(VERSIONS[db.dialect].length);
    } finally {
      await app.close();
    }
  });
});

async function indexNames(rows: (q: string) => Promise<Record<string, unknown>[]>, dialect: string): Promise<string[]> {
  const q =
    dialect === 'postgres'
      ? `SELECT indexname AS name FROM pg_indexes WHERE tablename IN ('jobs', 'job_deps')`
      : dialect === 'mysql'
        ? `SELECT DISTINCT index_name AS name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name IN ('jobs', 'job_deps')`
        : `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('jobs', 'job_deps')`;
  return (await rows(q)).map((r) => String(r.name));
}
