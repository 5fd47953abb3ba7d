import type { Sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import type { JobQueueDatabase } from '../../lib/database/job-queue.database';
import { cancelJobs } from '../../lib/finalize/cancel.sql';
import { retryJobs } from '../../lib/finalize/retry.sql';
import { JobQueryService } from '../../lib/query/job-query.service';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

/**
 * MySQL and MariaDB estimate `parent_id IN (…)` of 200 values or more from index statistics in
 * which every job without a parent counts as one value, and then read the whole table (0.8 s a
 * statement at 1,000,000 jobs). getGraph, cancel and retry send such lists for wide graphs and
 * many containers: each must reach the jobs table through an index, here with 200,000 jobs
 * without a parent beside 300 containers.
 */
describeDialects(
  'parent_id lists use the index on MySQL/MariaDB at table scale',
  (db) => {
    let app: QueueApp;
    const statements: { text: string; params: unknown[] }[] = [];
    let recorder: SqlExecutor;

    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['n', 't'] });
      const now = 'UTC_TIMESTAMP(3)';
      await app.rows(`INSERT INTO jobs (type, args, state, group_key, weight, priority, run_after, attempts, max_attempts, created_at, finished_at, updated_at)
        SELECT 't', '{}', 'done', 'g', 1, 0, ${now}, 1, 3, ${now}, ${now}, ${now} FROM seq_1_to_200000`);
      recorder = { dialect: app.db.dialect, run: (s: Sql) => (statements.push(s.render('mysql')), app.db.run(s)) };
    }, 120_000);
    afterAll(() => app?.close());

    /** Every recorded statement with a parent_id list, and how EXPLAIN says it reads `jobs`. */
    const parentListReads = async () => {
      const out: { rows: number; access: string[] }[] = [];
      for (const { text, params } of statements.splice(0)) {
        const list = /parent_id IN \(([^)]*)\)/.exec(text);
        if (!list) continue;
        const plan = (await app.dataSource.query(`EXPLAIN ${text}`, params)) as Array<{ table: string; type: string }>;
        out.push({ rows: list[1].split(',').length, access: plan.filter((p) => p.table === 'jobs' || p.table === 'j').map((p) => p.type) });
      }
      return out;
    };

    it('getGraph, cancel and retry of 300 containers read no parent list by a full scan', async () => {
      const nodes = [{ ref: 'root', type: 'n' }];
      for (let i = 0; i < 300; i++) nodes.push({ ref: `c${i}`, type: 'n' }, { ref: `k${i}`, type: 'n', parent: `c${i}`, dependsOn: ['root'] } as never);
      const ids = await app.queue.enqueueGraph(nodes);
      await app.rows('ANALYZE TABLE jobs');
      const containers = Array.from({ length: 300 }, (_, i) => ids[`c${i}`]);

      const graph = await new JobQueryService(recorder as unknown as JobQueueDatabase).getGraph(ids.root);
      expect(graph.nodes).toHaveLength(601);
      await cancelJobs(recorder, containers);
      expect(await app.count(`state = 'cancelled'`)).toBe(600);
      await retryJobs(recorder, containers);
      expect(await app.count(`state = 'cancelled'`)).toBe(0);

      const reads = await parentListReads();
      // getGraph's round from the 300 children to their parents, cancel's members, retry's members and counts.
      expect(reads.reduce((n, r) => n + r.rows, 0)).toBeGreaterThanOrEqual(4 * 300);
      for (const r of reads) {
        expect(r.access.length).toBeGreaterThan(0);
        expect(r.access.filter((t) => t === 'ALL' || t === 'index')).toEqual([]);
      }
    }, 120_000);
  },
  ['mysql'],
);
