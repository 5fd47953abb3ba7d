import type { Sql } from '../../lib/database/sql';
import { removeFinishedJobs } from '../../lib/sweeps/retention.sql';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

/**
 * A retention batch costs what its own rows cost, not a pass over the table. On PostgreSQL the
 * batch's NOT EXISTS checks, planned as anti-joins over a table of finished jobs (statistics: no
 * open job to speak of), read the whole jobs table for each of its three checks on it, every
 * batch: 1.1-2.3 s a batch of 500 at 1,000,000 jobs and 500,000 edges, where the lookups take
 * 15-70 ms (.scratch/retention-batches.cjs). Here the batch's statements are replayed with
 * EXPLAIN (ANALYZE, BUFFERS): pages read, whatever the machine's speed.
 */
describeDialects(
  'retention at table scale',
  (db) => {
    let app: QueueApp;
    const ROWS = 100_000;

    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
      await app.rows(`INSERT INTO jobs (type, args, state, group_key, finished_at)
        SELECT 't', '{}', 'done', 'g', now() - interval '2 days' + g * interval '1 ms' FROM generate_series(1, ${ROWS}) g`);
      await app.rows(`INSERT INTO job_deps (job_id, depends_on_id) SELECT id, id - 1 FROM jobs WHERE id % 2 = 1 AND id > (SELECT MIN(id) FROM jobs)`);
      // The one open job: a container, its child done and old.
      const { box } = await app.queue.enqueueGraph([{ ref: 'box', type: 'container' }, { ref: 'child', type: 't', parent: 'box' }]);
      await app.rows(`UPDATE jobs SET state = 'done', finished_at = now() - interval '3 days' WHERE parent_id = ${box}`);
      await app.rows('VACUUM ANALYZE jobs');
      await app.rows('ANALYZE job_deps');
    }, 60_000);
    afterAll(() => app?.close());

    it('a batch reads its candidates by index, not the whole table, and compiles nothing', async () => {
      const statements: { text: string; params: unknown[] }[] = [];
      const removed = await app.db.transaction((tx) =>
        removeFinishedJobs({ dialect: tx.dialect, run: (s: Sql) => (statements.push(s.render('postgres')), tx.run(s)) }, 3_600_000, 10, false),
      );
      expect(removed).toMatchObject({ jobs: 10, more: true });
      // The held child (oldest) was stepped over, not removed.
      expect(await app.count(`parent_id IS NOT NULL`)).toBe(1);

      const select = statements.findIndex((s) => /^SELECT j\.id/.test(s.text.trim()));
      expect(select).toBeGreaterThanOrEqual(0);
      const heapPages = Number((await app.rows(`SELECT relpages FROM pg_class WHERE relname = 'jobs'`))[0].relpages);
      const runner = app.dataSource.createQueryRunner();
      try {
        await runner.query('BEGIN');
        // Any cost would be compiled, unless the batch's own settings (replayed) say otherwise.
        await runner.query('SET LOCAL jit_above_cost = 0');
        for (const s of statements.slice(0, select)) if (/^SET /i.test(s.text.trim())) await runner.query(s.text, s.params);
        const [row] = await runner.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statements[select].text}`, statements[select].params);
        await runner.query('ROLLBACK');
        const [explained] = row['QUERY PLAN'];
        const buffers = explained.Plan['Shared Hit Blocks'] + explained.Plan['Shared Read Blocks'];
        expect({ buffers: buffers < heapPages / 2, jit: explained.JIT !== undefined }).toEqual({ buffers: true, jit: false });
      } finally {
        await runner.release();
      }
    }, 60_000);
  },
  ['postgres'],
);
