import type { Sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import type { JobQueueDatabase } from '../../lib/database/job-queue.database';
import { cancelJobs } from '../../lib/finalize/cancel.sql';
import { cascade } from '../../lib/finalize/cascade.sql';
import { retryJobs } from '../../lib/finalize/retry.sql';
import { walkGraph } from '../../lib/query/graph-walk';
import { JobQueryService } from '../../lib/query/job-query.service';
import { removeFinishedJobs } from '../../lib/sweeps/retention.sql';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

/**
 * MySQL and MariaDB estimate `IN (…)` lists of 200 values or more from index statistics, and for
 * skewed columns read the whole index or table instead (0.8 s a statement at 1,000,000 jobs):
 * `parent_id` (most jobs have none) and `job_deps.depends_on_id` (a fan-out's root holds most
 * edges). getGraph, cancel, retry and the finalize's cascade send such lists for wide graphs,
 * many containers and big finalize batches: each must read through an index, here beside
 * 200,000 jobs without a parent and a 1 → 3,000 fan-out.
 */
describeDialects(
  'lists on skewed columns use their index on MySQL/MariaDB at table scale',
  (db) => {
    let app: QueueApp;
    const statements: { text: string; params: unknown[] }[] = [];
    let recorder: SqlExecutor;
    let wide: Record<string, number>;

    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['n', 't'] });
      const now = 'UTC_TIMESTAMP(3)';
      await app.rows(`INSERT INTO jobs (type, args, state, group_key, weight, priority, run_after, attempts, max_attempts, created_at, finished_at, updated_at)
        SELECT 't', '{}', 'done', 'g', 1, 0, ${now}, 1, 3, ${now}, ${now}, ${now} FROM seq_1_to_200000`);
      // Skews job_deps: 3,000 of its edges share one depends_on_id.
      wide = await app.queue.enqueueGraph([
        { ref: 'root', type: 'n' },
        ...Array.from({ length: 3_000 }, (_, i) => ({ ref: `w${i}`, type: 'n', dependsOn: ['root'] })),
      ]);
      recorder = { dialect: app.db.dialect, run: (s: Sql) => (statements.push(s.render('mysql')), app.db.run(s)) };
    }, 120_000);
    afterAll(() => app?.close());

    /** Every recorded statement with such a list, its length, and how EXPLAIN reads each table. */
    const listReads = async () => {
      const out: { column: string; values: number; access: string[] }[] = [];
      for (const { text, params } of statements.splice(0)) {
        const lists = [...text.matchAll(/(parent_id|depends_on_id|dep\.job_id) IN \(([^)]*)\)/g)];
        if (!lists.length) continue;
        const plan = (await app.dataSource.query(`EXPLAIN ${text}`, params)) as Array<{ table: string; type: string }>;
        // A recursive CTE's own rows (`sub`, `<derived…>`) are read whole by design.
        const tables = plan.filter((p) => p.table && p.table !== 'sub' && !p.table.startsWith('<'));
        for (const list of lists) out.push({ column: list[1], values: list[2].split(',').length, access: tables.map((p) => `${p.table}:${p.type}`) });
      }
      return out;
    };
    const fullReads = (reads: Awaited<ReturnType<typeof listReads>>) =>
      reads.flatMap((r) => r.access.filter((a) => /:(ALL|index)$/.test(a)).map((a) => `${r.column} list of ${r.values}: ${a}`));

    it('getGraph, cancel and retry of 300 containers read their lists through the indexes', async () => {
      const nodes = [{ ref: 'root', type: 'n' }];
      for (let i = 0; i < 300; i++) nodes.push({ ref: `c${i}`, type: 'n' }, { ref: `k${i}`, type: 'n', parent: `c${i}`, dependsOn: ['root'] } as never);
      const ids = await app.queue.enqueueGraph(nodes);
      await app.rows('ANALYZE TABLE jobs, job_deps');
      const containers = Array.from({ length: 300 }, (_, i) => ids[`c${i}`]);

      const graph = await new JobQueryService(recorder as unknown as JobQueueDatabase).getGraph(ids.root);
      expect(graph.nodes).toHaveLength(601);
      await cancelJobs(recorder, containers);
      expect(await app.count(`state = 'cancelled'`)).toBe(600);
      await retryJobs(recorder, containers);
      expect(await app.count(`state = 'cancelled'`)).toBe(0);

      const reads = await listReads();
      // getGraph's round from the 300 children to their parents, cancel's members, retry's members and counts.
      expect(reads.filter((r) => r.column === 'parent_id').reduce((n, r) => n + r.values, 0)).toBeGreaterThanOrEqual(4 * 300);
      expect(reads.every((r) => r.access.length > 0)).toBe(true);
      expect(fullReads(reads)).toEqual([]);
    }, 120_000);

    it("getGraph's reach statements (several levels each) read every relation through an index", async () => {
      // A chain of 100 containers, each holding one job: every relation of the walk is used.
      const nodes = [];
      for (let i = 0; i < 100; i++) nodes.push({ ref: `b${i}`, type: 'n', dependsOn: i ? [`b${i - 1}`] : [] }, { ref: `j${i}`, type: 'n', parent: `b${i}` });
      const ids = await app.queue.enqueueGraph(nodes);
      await app.rows('ANALYZE TABLE jobs, job_deps');
      statements.length = 0;
      expect((await walkGraph(recorder, ids.j50)).ids).toHaveLength(200);
      const reach = statements.splice(0).filter((s) => s.text.startsWith('WITH RECURSIVE'));
      expect(reach.length).toBeGreaterThan(0);
      for (const { text, params } of reach) {
        const plan = (await app.dataSource.query(`EXPLAIN ${text}`, params)) as Array<{ table: string | null; type: string | null }>;
        // The walk's and the seeds' own rows (`<derived…>`) are read whole by design.
        const tables = plan.filter((p) => p.table && !p.table.startsWith('<'));
        expect(tables.length).toBeGreaterThan(0);
        expect(tables.filter((p) => /^(ALL|index)$/.test(String(p.type))).map((p) => `${p.table}:${p.type}`)).toEqual([]);
      }
    }, 120_000);

    it('a finalize batch of 500 done jobs counts down and cascades through the index', async () => {
      const leaves = await app.queue.enqueueGraph(Array.from({ length: 500 }, (_, i) => ({ ref: `l${i}`, type: 'n' })));
      await app.rows('ANALYZE TABLE jobs, job_deps');
      const ids = Object.values(leaves);
      statements.length = 0;
      await cascade(recorder, ids.map((id) => ({ id, parentId: null, outcome: 'done' as const })));
      await cascade(recorder, ids.map((id) => ({ id, parentId: null, outcome: 'failed' as const })));
      const reads = await listReads();
      expect(reads.filter((r) => r.column === 'depends_on_id').reduce((n, r) => n + r.values, 0)).toBeGreaterThanOrEqual(2 * 500);
      expect(fullReads(reads)).toEqual([]);
      expect(await app.count(`id IN (${Object.values(wide).join(',')}) AND state = 'waiting'`)).toBe(3_000);
    }, 120_000);

    it('retention removes 500 finished jobs and their edges through the index', async () => {
      const old = await app.queue.enqueueGraph(Array.from({ length: 500 }, (_, i) => ({ ref: `o${i}`, type: 'n' })));
      await app.rows(`UPDATE jobs SET state = 'done', finished_at = UTC_TIMESTAMP(3) - INTERVAL 1 DAY WHERE id IN (${Object.values(old).join(',')})`);
      await app.rows('ANALYZE TABLE jobs, job_deps');
      statements.length = 0;
      // Oldest first: the 500 above (200,000 bulk rows finished now).
      expect(await removeFinishedJobs(recorder, 3_600_000, 500, false)).toMatchObject({ jobs: 500, keyRows: 0, more: true, bytes: 0 });
      const reads = await listReads();
      expect(reads.filter((r) => r.column === 'depends_on_id').reduce((n, r) => n + r.values, 0)).toBe(500);
      expect(fullReads(reads)).toEqual([]);
    }, 120_000);
  },
  ['mysql'],
);
