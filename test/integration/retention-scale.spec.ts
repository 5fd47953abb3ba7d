import { jest } from '@jest/globals';
import type { Sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { removeFinishedJobs } from '../../lib/sweeps/retention.sql';
import { SweepsService } from '../../lib/sweeps/sweeps.service';
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

    // A run's batches go on after the rows the batch before removed: the rows held before them
    // (children of an open container here) are stepped over once per run, not once per batch.
    // 100,000 held, 50,000 removable behind them, batches of 500: 15 s a run -> 2 s
    // (.scratch/retention-blocked.cjs).
    it('a run steps over the rows held before its batches once, not once per batch', async () => {
      const HELD = 2_000;
      const run = await startQueueApp(db, { worker: false, externalTypes: ['t'], retention: { olderThanMs: 3_600_000, batchSize: 10, intervalMs: 3_600_000 } });
      try {
        await run.rows('DELETE FROM job_deps');
        await run.rows('DELETE FROM jobs');
        const { box } = await run.queue.enqueueGraph([{ ref: 'box', type: 'container' }, { ref: 'open', type: 't', parent: 'box' }]);
        await run.rows(`INSERT INTO jobs (type, args, state, group_key, parent_id, finished_at)
          SELECT 't', '{}', 'done', 'g', ${box}, now() - interval '3 days' + g * interval '1 ms' FROM generate_series(1, ${HELD}) g`);
        await run.rows(`INSERT INTO jobs (type, args, state, group_key, finished_at)
          SELECT 't', '{}', 'done', 'g', now() - interval '2 days' + g * interval '1 ms' FROM generate_series(1, 100) g`);
        await run.rows('VACUUM ANALYZE jobs');
        const selects: { text: string; params: unknown[] }[] = [];
        const transaction = run.db.transaction.bind(run.db);
        const spy = jest.spyOn(run.db, 'transaction').mockImplementation(((work: (tx: SqlExecutor) => Promise<unknown>) =>
          transaction((tx) =>
            work({
              dialect: tx.dialect,
              run: (s: Sql) => {
                const r = s.render('postgres');
                if (/^SELECT j\.id/.test(r.text.trim())) selects.push(r);
                return tx.run(s);
              },
            }),
          )) as never);
        try {
          expect(await run.module.get(SweepsService).retain()).toBe(100);
        } finally {
          spy.mockRestore();
        }
        expect(await run.count()).toBe(HELD + 2);
        expect(selects.length).toBeGreaterThanOrEqual(10);
        // Each batch's statement again, now that its rows are gone: the finished rows it walks.
        let walked = 0;
        for (const { text, params } of selects) {
          const [row] = await run.rows(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, params);
          const scans: Array<Record<string, number>> = [];
          const visit = (node: Record<string, unknown>) => {
            if (node['Alias'] === 'j') scans.push(node as Record<string, number>);
            for (const child of (node['Plans'] as Record<string, unknown>[] | undefined) ?? []) visit(child);
          };
          visit((row['QUERY PLAN'] as Array<{ Plan: Record<string, unknown> }>)[0].Plan);
          walked += scans.reduce((n, p) => n + p['Actual Rows'] + (p['Rows Removed by Filter'] ?? 0), 0);
        }
        expect(walked).toBeLessThan(2 * HELD);
      } finally {
        await run.close();
      }
    }, 60_000);
  },
  ['postgres'],
);
