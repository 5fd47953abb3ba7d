import type { GraphNode } from '../../lib';
import type { Sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { skewedListChunk } from '../../lib/database/in-chunks';
import { noJitStatement } from '../../lib/database/no-jit.sql';
import { graphReachStatement, REACH_BUDGET } from '../../lib/query/graph-reach.sql';
import { walkGraph } from '../../lib/query/graph-walk';
import { GRAPH_CHUNK, neighboursStatement } from '../../lib/query/job-graph.sql';
import { buildReportGraph } from '../../sample-app/reports/report.graph';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

/**
 * The walk behind getGraph and the dashboard's graph: how many statements it sends (a chain
 * took one round trip per level, 5,000 of them from the middle of a long chain), that none binds
 * or returns more than its bound, and that it keeps the same jobs in the same order as the walk
 * of one round per level, which stays here as the reference.
 */
describeDialects('getGraph walk: few statements on long thin graphs, the same nodes as one round per level', (db) => {
  let app: QueueApp;
  const sent: { text: string; params: number; rows: number }[] = [];
  /** `on`, recording each statement, its bound parameters and rows. */
  const counting = (on: SqlExecutor): SqlExecutor => ({
    dialect: on.dialect,
    run: async (s: Sql) => {
      const { text, params } = s.render(db.dialect);
      const result = await on.run(s);
      sent.push({ text, params: params.length, rows: result.rows.length });
      return result;
    },
  });

  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['n', 'report', 'fetch', 'parse', 'aggregate', 'render', 'notify'] });
  });
  afterAll(() => app?.close());
  beforeEach(() => resetTables(app));

  /** The walk as it was: one round of neighbour lookups per level (and its statement count). */
  async function referenceWalk(id: number, maxNodes: number): Promise<{ ids: number[]; truncated: boolean; statements: number }> {
    let statements = 1; // the root's lookup
    const seen = new Set<number>([id]);
    let frontier = [id];
    let truncated = false;
    const step = Math.min(GRAPH_CHUNK, skewedListChunk(app.db.dialect));
    while (frontier.length && !truncated) {
      const next: number[] = [];
      for (let i = 0; i < frontier.length && !truncated; i += step) {
        const { rows } = await app.db.run(neighboursStatement(frontier.slice(i, i + step)));
        statements++;
        for (const n of rows.map((r) => Number(r.id)).sort((a, b) => Math.abs(a - id) - Math.abs(b - id) || a - b)) {
          if (seen.has(n)) continue;
          if (seen.size >= maxNodes) {
            truncated = true;
            break;
          }
          seen.add(n);
          next.push(n);
        }
      }
      frontier = next;
    }
    return { ids: [...seen], truncated, statements };
  }

  /** Walks from `start`, checks it against the reference and the bounds; statement counts of both. */
  async function walk(start: number, maxNodes = 10_000): Promise<{ statements: number; before: number; nodes: number; truncated: boolean }> {
    sent.length = 0;
    // As walkJobGraph does: PostgreSQL walks in a transaction with JIT off (its SET not counted).
    const got =
      db.dialect === 'postgres'
        ? await app.db.transaction(async (tx) => (await tx.run(noJitStatement()), walkGraph(counting(tx), start, maxNodes)))
        : await walkGraph(counting(app.db), start, maxNodes);
    const statements = sent.length;
    const { statements: before, ...reference } = await referenceWalk(start, maxNodes);
    expect(got).toEqual(reference);
    for (const s of sent) {
      expect(s.params).toBeLessThanOrEqual(4 * GRAPH_CHUNK);
      // A reach statement returns at most twice its budget, plus its seeds.
      if (/WITH RECURSIVE/.test(s.text)) expect(s.rows).toBeLessThanOrEqual(2 * REACH_BUDGET + 50);
    }
    // Never more than one statement over the rounds (a reach statement that finds a wide level).
    expect(statements).toBeLessThanOrEqual(before + 1);
    return { statements, before, nodes: got.ids.length, truncated: got.truncated };
  }

  const chain = (n: number): GraphNode[] => Array.from({ length: n }, (_, i) => ({ ref: `c${i}`, type: 'n', dependsOn: i ? [`c${i - 1}`] : [] }));

  it('a chain of 6,000 from the middle: a handful of statements, where one round per level sent 3,001', async () => {
    const ids = await app.queue.enqueueGraph(chain(6_000));
    const whole = await walk(ids.c3000);
    expect(whole).toMatchObject({ before: 3_002, nodes: 6_000, truncated: false });
    expect(whole.statements).toBeLessThanOrEqual(12);
    // Cut at 1,000 (the dashboard's bound), and from an end.
    expect(await walk(ids.c3000, 1_000)).toMatchObject({ statements: 4, before: 501, truncated: true });
    expect(await walk(ids.c0, 1_000)).toMatchObject({ statements: 5, before: 1_001, nodes: 1_000, truncated: true });
  });

  it('a pipeline in its container, and a chain through containers: a few levels per statement', async () => {
    const ids = await app.queue.enqueueGraph(buildReportGraph('acme', ['a', 'b', 'c']));
    expect(await walk(ids['parse:b'])).toEqual({ statements: 2, before: 4, nodes: 10, truncated: false });
    const boxes: GraphNode[] = [];
    for (let i = 0; i < 200; i++) {
      boxes.push({ ref: `b${i}`, type: 'n', dependsOn: i ? [`b${i - 1}`] : [] }, { ref: `k${i}`, type: 'n', parent: `b${i}` });
    }
    const chained = await app.queue.enqueueGraph(boxes);
    // Each box's child takes half of what its box passes on: few levels per statement, so mostly rounds.
    const comb = await walk(chained.k100);
    expect(comb).toMatchObject({ before: 103, nodes: 400 });
    expect(comb.statements).toBeLessThan(comb.before);
  });

  it('wide graphs take rounds as before: a 1 → 3,000 fan-out from a leaf, a 3,000-way fan-in, a 5,000-node diamond', async () => {
    const fan = await app.queue.enqueueGraph([{ ref: 'root', type: 'n' }, ...Array.from({ length: 3_000 }, (_, i) => ({ ref: `f${i}`, type: 'n', dependsOn: ['root'] }))]);
    const whole = await walk(fan.f1500);
    expect(whole).toMatchObject({ nodes: 3_001, truncated: false });
    expect(whole.statements).toBe(whole.before);
    expect(await walk(fan.f1500, 1_000)).toEqual({ statements: 3, before: 3, nodes: 1_000, truncated: true });
    const ups = Array.from({ length: 3_000 }, (_, i) => ({ ref: `u${i}`, type: 'n' }));
    const fanIn = await app.queue.enqueueGraph([...ups, { ref: 'sink', type: 'n', dependsOn: ups.map((u) => u.ref) }]);
    expect(await walk(fanIn.u0, 1_000)).toEqual({ statements: 3, before: 3, nodes: 1_000, truncated: true });
    const mids = Array.from({ length: 4_998 }, (_, i) => ({ ref: `m${i}`, type: 'n', dependsOn: ['root'] }));
    const diamond = await app.queue.enqueueGraph([{ ref: 'root', type: 'n' }, ...mids, { ref: 'sink', type: 'n', dependsOn: mids.map((m) => m.ref) }]);
    for (const start of [diamond.root, diamond.m2500, diamond.sink]) expect((await walk(start)).nodes).toBe(5_000);
  });

  it('a tree, a layered DAG and a ladder, cut mid-level: the same nodes as one round per level', async () => {
    // A ternary tree of 7 levels (3,280 jobs), walked from a leaf and cut at 1,000.
    const tree: GraphNode[] = [{ ref: 't0', type: 'n' }];
    for (let i = 1; i < 3_280; i++) tree.push({ ref: `t${i}`, type: 'n', dependsOn: [`t${Math.floor((i - 1) / 3)}`] });
    const t = await app.queue.enqueueGraph(tree);
    expect(await walk(t.t3000, 1_000)).toMatchObject({ nodes: 1_000, truncated: true });
    expect((await walk(t.t3000)).nodes).toBe(3_280);
    // 20 layers of 50, each job depending on 3 of the layer before (fixed pseudo-random).
    let x = 7;
    const rnd = (n: number) => ((x = (x * 1_103_515_245 + 12_345) % 2_147_483_648), x % n);
    const layered: GraphNode[] = [];
    for (let l = 0; l < 20; l++) {
      for (let k = 0; k < 50; k++) layered.push({ ref: `l${l}_${k}`, type: 'n', dependsOn: l ? [...new Set([rnd(50), rnd(50), rnd(50)])].map((j) => `l${l - 1}_${j}`) : [] });
    }
    const g = await app.queue.enqueueGraph(layered);
    await walk(g.l10_25);
    await walk(g.l10_25, 300);
    // A ladder: two chains of 1,500 with a rung every 10 steps.
    const ladder: GraphNode[] = [];
    for (let i = 0; i < 1_500; i++) {
      ladder.push({ ref: `a${i}`, type: 'n', dependsOn: i ? [`a${i - 1}`] : [] });
      ladder.push({ ref: `b${i}`, type: 'n', dependsOn: [...(i ? [`b${i - 1}`] : []), ...(i % 10 === 0 ? [`a${i}`] : [])] });
    }
    const lad = await app.queue.enqueueGraph(ladder);
    const rungs = await walk(lad.a750);
    expect(rungs.nodes).toBe(3_000);
    expect(rungs.statements).toBeLessThan(rungs.before / 2);
    await walk(lad.b10, 500);
  });
});

describeDialects(
  'getGraph walk: the plan of a reach statement',
  (db) => {
    let app: QueueApp;
    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['n'] });
    });
    afterAll(() => app?.close());

    it('reach statements and rounds read every relation by index or rowid: no scan of jobs or job_deps', async () => {
      // SQLite read a job's parent by scanning the partial parent index (its WHERE matched `parent_id <> prev`).
      const ids = await app.queue.enqueueGraph([{ ref: 'box', type: 'n' }, { ref: 'a', type: 'n', parent: 'box' }, { ref: 'b', type: 'n', dependsOn: ['a'] }]);
      await app.rows('ANALYZE');
      const { text, params } = graphReachStatement(app.db.dialect, [{ id: ids.a, prev: 0, budget: 64 }]).render('sqlite');
      const plan = (await app.rows(`EXPLAIN QUERY PLAN ${text}`, params)).map((r) => String(r.detail));
      expect(plan.filter((l) => /^SEARCH (x|d|c|p) /.test(l)).length).toBeGreaterThanOrEqual(4);
      expect(plan.filter((l) => /^SCAN (x|d|c|p|jobs|job_deps)\b/.test(l))).toEqual([]);
      // A round's parents are read by id too, not by a range over every job that has a parent.
      const round = neighboursStatement([ids.a, ids.b]).render('sqlite');
      const roundPlan = (await app.rows(`EXPLAIN QUERY PLAN ${round.text}`, round.params)).map((r) => String(r.detail));
      expect(roundPlan.filter((l) => /^SCAN|parent_id>/.test(l))).toEqual([]);
    });
  },
  ['sqlite'],
);
