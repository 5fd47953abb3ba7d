/**
 * query — find / getGraph latency as the table grows. For each dialect, on a fresh database
 * holding N finished jobs (N = 10,000, then 1,000,000; bulk SQL, 5% failed, 10 types, N / 100
 * groups/tenants of 100 jobs each with the tenant in args) plus 10,000 ready jobs of other
 * tenants and one 1,000-node graph, time (p50/p95 over the samples) a find page of 50 by
 * state+type, by group, by argsContains, the next page by cursor, and getGraph of the
 * 1,000-node graph. Every query returns the same rows at both sizes (a tenant has as many jobs in
 * a big table as in a small one: there are more tenants), so the ratio shows what the table's
 * size costs. Both tables exist at once and their calls alternate, so a shared machine's load
 * falls on both sizes alike. With --runs=N, the whole measurement N times, reporting the median
 * of the p50s and of the p95s and the ratio of those medians.
 */
import type { Dialect, FindResult, JobFilter } from 'nestjs-sql-job-queue';
import { FailureLog } from '../lib/correctness';
import { withDatabase, type BenchDatabase, type Probe } from '../lib/databases';
import { num, ratio } from '../lib/format';
import { analyze } from '../lib/ours/filler';
import { bootEnqueuer, type OurApp } from '../lib/ours/our-app';
import type { ScenarioReport, Table } from '../lib/report';
import type { BenchContext, Scenario } from '../lib/scenario';
import { median, percentile } from '../lib/stats';

/** All three by default; QUERY_BENCH_DIALECTS=mysql (comma-separated) measures fewer. */
const DIALECTS: Dialect[] = (process.env.QUERY_BENCH_DIALECTS ?? 'postgres,mysql,sqlite').split(',').filter(Boolean) as Dialect[];
const READY = 10_000;
const PAGE = 50;
/** Finished jobs per tenant at every table size: the table grows by its number of tenants. */
const PER_TENANT = 100;

interface Query {
  key: string;
  label: string;
  run(app: OurApp, graphRoot: number): Promise<number>;
}

const byStateType: JobFilter = { state: 'failed', type: 'type0' };
const QUERIES: Query[] = [
  { key: 'state-type', label: `find state+type (page of ${PAGE})`, run: async (a) => (await a.queue.find(byStateType, { limit: PAGE })).jobs.length },
  { key: 'group', label: `find group`, run: async (a) => (await a.queue.find({ group: 't42' }, { limit: PAGE })).jobs.length },
  { key: 'args', label: `find argsContains`, run: async (a) => (await a.queue.find({ argsContains: { tenant: 't42' } }, { limit: PAGE })).jobs.length },
  { key: 'cursor', label: `find next page by cursor`, run: async (a) => (await a.queue.find(byStateType, { limit: PAGE, cursor: cursors.get(a)! })).jobs.length },
  { key: 'graph', label: 'getGraph (1,000 nodes)', run: async (a, root) => (await a.queue.getGraph(root)).nodes.length },
];
const cursors = new WeakMap<OurApp, string>();

export const queryScenario: Scenario = {
  name: 'query',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const quick = ctx.config.quick;
    const sizes = quick ? [10_000, 50_000] : [10_000, 1_000_000];
    const samples = ctx.config.samples ?? (quick ? 10 : 40);
    const failures = new FailureLog();
    const samplesOf = new Map<string, Array<{ p50: number; p95: number; rows: number }>>();
    const fillMs = new Map<string, number>();
    for (let run = 1; run <= ctx.config.runs; run++) {
      for (const dialect of DIALECTS) {
        const what = `${dialect}, run ${run}/${ctx.config.runs}`;
        try {
          // Both tables at once, their calls interleaved: the machine's load then falls on both
          // sizes alike, and the ratio shows the table's size rather than when each was timed.
          await withDatabase(dialect, (small) =>
            withDatabase(dialect, async (large) => {
              const tables: FilledTable[] = [];
              try {
                for (const [size, db] of [[sizes[0], small], [sizes[1], large]] as const) {
                  tables.push(await prepare(dialect, size, db, fillMs));
                }
                for (const q of QUERIES) {
                  const times = tables.map((): number[] => []);
                  const rows = tables.map(() => 0);
                  for (let i = 0; i < samples + 3; i++) {
                    // Which size goes first alternates, call by call.
                    for (const k of i % 2 ? [1, 0] : [0, 1]) {
                      const t = performance.now();
                      rows[k] = await q.run(tables[k].app, tables[k].graphRoot);
                      if (i >= 3) times[k].push(performance.now() - t); // 3 warm-up calls
                    }
                  }
                  tables.forEach((table, k) => {
                    const r = { p50: percentile(times[k], 50), p95: percentile(times[k], 95), rows: rows[k] };
                    const key = `${dialect}:${table.size}:${q.key}`;
                    samplesOf.set(key, [...(samplesOf.get(key) ?? []), r]);
                    ctx.progress(`${what}, ${num(table.size)} finished: ${q.label}: p50 ${num(r.p50, 2)} ms, p95 ${num(r.p95, 2)} ms, ${r.rows} rows`);
                  });
                }
              } finally {
                for (const t of tables) await t.app.close();
              }
            }),
          );
        } catch (err) {
          failures.add(what, [(err as Error).message]);
        }
      }
    }
    const results = new Map<string, { p50: number; p95: number; rows: number }>();
    for (const [key, runs] of samplesOf) {
      results.set(key, { p50: median(runs.map((r) => r.p50)), p95: median(runs.map((r) => r.p95)), rows: Math.min(...runs.map((r) => r.rows)) });
    }
    return {
      name: this.name,
      description: 'find and getGraph latency with 10,000 and 1,000,000 finished jobs (plus 10,000 ready) in the table, per dialect.',
      settings: [
        `finished rows by bulk SQL: 10 types (type0–type9), N / ${PER_TENANT} groups (t0, t1, …) of ${PER_TENANT} rows each, round robin, with args {"tenant": group, "n": i}; every 20th failed (all of type0), the rest done`,
        `${num(READY)} ready rows of the same shape in 100 other groups (r0–r99); one 1,000-node fan-out/fan-in graph through enqueueGraph; then VACUUM ANALYZE / ANALYZE TABLE / ANALYZE`,
        `every query returns the same rows at both sizes: t42's ${PER_TENANT} rows are spread over the whole table (every N / ${PER_TENANT}th row), so a page reads 50 rows far apart`,
        `both tables filled side by side (two databases, two apps in the bench process) and their calls interleaved, small then large, then large then small, so the machine's load falls on both alike`,
        `${ctx.config.runs} run(s) of the whole measurement; the table shows the median over runs of each p50 and p95`,
        `${samples} timed calls per query after 3 warm-up calls, one enqueue-only app in the bench process; page size ${PAGE}`,
        `filters: state 'failed' + type 'type0'; group 't42'; argsContains { tenant: 't42' }; the next page of state+type by cursor`,
      ],
      tables: [table(sizes, samples, ctx.config.runs, results, fillMs)],
      failures: failures.entries,
    };
  },
};

/** One filled table and the app that queries it. */
interface FilledTable {
  size: number;
  app: OurApp;
  graphRoot: number;
}

/** Boots an app on `db`, fills it (`size` finished, the ready rows, the 1,000-node graph) and analyzes it. */
async function prepare(dialect: Dialect, size: number, db: BenchDatabase, fillMs: Map<string, number>): Promise<FilledTable> {
  const app = await bootEnqueuer(dialect, db.location);
  try {
    const probe = await db.probe();
    const t0 = Date.now();
    await fill(probe, dialect, size, 'finished');
    await fill(probe, dialect, READY, 'ready');
    const graph = await app.queue.enqueueGraph([
      { ref: 'root', type: 'noop' },
      ...Array.from({ length: 998 }, (_, i) => ({ ref: `m${i}`, type: 'noop', dependsOn: ['root'] })),
      { ref: 'sink', type: 'noop', dependsOn: Array.from({ length: 998 }, (_, i) => `m${i}`) },
    ]);
    await analyze(probe, dialect);
    fillMs.set(`${dialect}:${size}`, Date.now() - t0);
    const first: FindResult = await app.queue.find(byStateType, { limit: PAGE });
    if (!first.nextCursor) throw new Error('no second page of state+type');
    cursors.set(app, first.nextCursor);
    return { size, app, graphRoot: graph.root };
  } catch (err) {
    await app.close();
    throw err;
  }
}

function table(sizes: number[], samples: number, runs: number, results: Map<string, { p50: number; p95: number; rows: number }>, fillMs: Map<string, number>): Table {
  const rows: string[][] = [];
  const [small, large] = sizes;
  for (const dialect of DIALECTS) {
    for (const q of QUERIES) {
      const a = results.get(`${dialect}:${small}:${q.key}`);
      const b = results.get(`${dialect}:${large}:${q.key}`);
      rows.push([
        dialect,
        q.label,
        a ? num(a.p50, 2) : 'FAILED',
        a ? num(a.p95, 2) : 'FAILED',
        b ? num(b.p50, 2) : 'FAILED',
        b ? num(b.p95, 2) : 'FAILED',
        ratio(b?.p50, a?.p50),
        ratio(b?.p95, a?.p95),
        a && b ? `${a.rows} / ${b.rows}` : '',
      ]);
    }
    rows.push([dialect, `(fill ms of the last run: ${num(fillMs.get(`${dialect}:${small}`) ?? NaN)} / ${num(fillMs.get(`${dialect}:${large}`) ?? NaN)})`, '', '', '', '', '', '', '']);
  }
  return {
    title: `Query latency, ms — ${samples} calls per query, median of ${runs} run(s)`,
    columns: ['Dialect', 'Query', `p50 @ ${num(small)}`, `p95 @ ${num(small)}`, `p50 @ ${num(large)}`, `p95 @ ${num(large)}`, 'p50 ratio', 'p95 ratio', 'Rows'],
    rows,
    notes: [
      'Rows = jobs (or graph nodes) the call returned at each size. On MySQL/MariaDB and SQLite, argsContains is checked on a window of the newest 10,000 candidate rows per call, so a page can hold fewer than 50 jobs with a nextCursor to continue.',
      'p50 / p95 ratio = the large size ÷ 10,000 rows; near 1 means flat.',
    ],
  };
}

/**
 * Bulk rows: finished ones in `count / PER_TENANT` tenants t0, t1, … (round robin, so each
 * tenant's rows are spread over the whole table), ready ones in tenants r0–r99, which no query asks for.
 */
async function fill(probe: Probe, dialect: Dialect, count: number, kind: 'finished' | 'ready'): Promise<void> {
  const g = dialect === 'mysql' ? 'seq' : 'g';
  const tenants = kind === 'ready' ? 100 : count / PER_TENANT;
  const prefix = kind === 'ready' ? 'r' : 't';
  const cat = (...parts: string[]) => (dialect === 'mysql' ? `CONCAT(${parts.join(', ')})` : parts.join(' || '));
  const now = dialect === 'postgres' ? 'now()' : dialect === 'mysql' ? 'UTC_TIMESTAMP(3)' : `strftime('%Y-%m-%d %H:%M:%f', 'now')`;
  const state = kind === 'ready' ? `'ready'` : `CASE WHEN ${g} % 20 = 0 THEN 'failed' ELSE 'done' END`;
  const error = kind === 'ready' ? 'NULL' : `CASE WHEN ${g} % 20 = 0 THEN 'boom' ELSE NULL END`;
  const finished = kind === 'ready' ? 'NULL' : now;
  const cols = `type, args, state, group_key, weight, priority, run_after, attempts, max_attempts, last_error, created_at, started_at, finished_at, updated_at`;
  const vals = `${cat(`'type'`, `(${g} % 10)`)}, ${cat(`'{"tenant":"${prefix}'`, `(${g} % ${tenants})`, `'","n":'`, `${g}`, `'}'`)}, ${state}, ${cat(`'${prefix}'`, `(${g} % ${tenants})`)},
    1, 0, ${now}, 1, 3, ${error}, ${now}, ${finished}, ${finished}, ${now}`;
  if (dialect === 'postgres') {
    await probe.query(`INSERT INTO jobs (${cols}) SELECT ${vals} FROM generate_series(1, $1) g`, [count]);
  } else if (dialect === 'sqlite') {
    await probe.query(`WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < ?) INSERT INTO jobs (${cols}) SELECT ${vals} FROM s`, [count]);
  } else {
    // MariaDB's sequence engine: seq_1_to_N is a virtual table of 1..N.
    for (let lo = 1; lo <= count; lo += 100_000) {
      const hi = Math.min(count, lo + 99_999);
      await probe.query(`INSERT INTO jobs (${cols}) SELECT ${vals} FROM seq_${lo}_to_${hi}`);
    }
  }
}
