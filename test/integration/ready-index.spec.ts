import { ClaimService, type ClaimRequest } from '../../lib';
import { claimCandidatesStatement, selectClaimCandidates } from '../../lib/claim/claim-candidates.sql';
import { dueLevelsStatement, readyFloorsStatement, readyTypesStatement, sqliteHeadStatement, toReadyFloors } from '../../lib/claim/ready-by-type.sql';
import { sqliteLeaseByIds, sqlitePickStatement, UNSIZED_UP_TO } from '../../lib/claim/sqlite.claim';
import { sql as sqlOf, type Sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { pairAfter } from '../../lib/claim/rotation.sql';
import { readyGroups } from '../../lib/scheduler/ready-groups.sql';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

const DONE_ROWS = 200_000;

/**
 * `count` rows of one type and state written straight into an empty jobs table (bulk SQL), then
 * the planner's statistics: 200k finished rows beside a few ready ones, or another type's backlog.
 */
async function fillRows(app: QueueApp, count: number, type: string, state: 'done' | 'ready'): Promise<void> {
  const d = app.db.dialect.name;
  const finished = state === 'done';
  const now = d === 'postgres' ? 'now()' : d === 'sqlite' ? `'2026-01-01'` : 'UTC_TIMESTAMP(3)';
  const cols = `type, args, state, run_after, created_at, updated_at${finished ? ', finished_at' : ''}`;
  const vals = `'${type}', 'null', '${state}', ${now}, ${now}, ${now}${finished ? `, ${now}` : ''}`;
  if (d === 'postgres') {
    await app.rows(`INSERT INTO jobs (${cols}) SELECT ${vals} FROM generate_series(1, ${count})`);
    await app.rows(`ANALYZE jobs`);
  } else if (d === 'sqlite') {
    await app.rows(`WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${count}) INSERT INTO jobs (${cols}) SELECT ${vals} FROM s`);
    await app.rows(`ANALYZE`);
  } else {
    await app.rows(`INSERT INTO jobs (${cols}) VALUES (${vals})`);
    for (let have = 1; have < count; have = Number((await app.rows(`SELECT COUNT(*) AS n FROM jobs`))[0].n)) {
      await app.rows(`INSERT INTO jobs (${cols}) SELECT ${cols} FROM jobs LIMIT ${Math.min(have, count - have)}`);
    }
    await app.rows(`ANALYZE TABLE jobs`);
  }
}

/**
 * EXPLAIN of a deployed PL/pgSQL function's one query, under the settings the function declares
 * (an EXPLAIN of the call itself shows only "Function Scan"). `args` are test-controlled literals.
 */
async function explainFunctionBody(app: QueueApp, name: string, argTypes: string, args: string, analyze: boolean | 'buffers' = false): Promise<{ plan: string; config: string[] }> {
  const [fn] = await app.rows(`SELECT prosrc, proconfig FROM pg_proc WHERE proname = $1`, [name]);
  const config = (fn.proconfig ?? []) as string[];
  const runner = app.dataSource.createQueryRunner();
  try {
    await runner.query(`BEGIN`);
    for (const setting of config) await runner.query(`SET LOCAL ${setting}`);
    const query = /RETURN QUERY([\s\S]*?);\s*END/.exec(String(fn.prosrc))?.[1] ?? String(fn.prosrc); // the PL/pgSQL body's one query
    await runner.query(`PREPARE probe (${argTypes}) AS ${query}`);
    const rows = await runner.query(`EXPLAIN ${analyze === 'buffers' ? '(ANALYZE, BUFFERS) ' : analyze ? '(ANALYZE) ' : ''}EXECUTE probe (${args})`);
    return { plan: rows.map((r: Record<string, unknown>) => Object.values(r).join(' ')).join('\n'), config };
  } finally {
    await runner.query(`ROLLBACK`);
    await runner.query(`DEALLOCATE ALL`);
    await runner.release();
  }
}

async function explainClaimFunction(app: QueueApp, q: { groups: string[]; limits: number[]; any: number }): Promise<string> {
  const array = (xs: Array<string | number>) => `'{${xs.join(',')}}'`;
  const { plan, config } = await explainFunctionBody(
    app,
    'job_queue_claim',
    'text, text[], text[], int[], int, float8, boolean',
    `'w', '{t}', ${array(q.groups)}, ${array(q.limits)}, ${q.any}, 30000, true`,
  );
  expect(config).toEqual(expect.arrayContaining(['enable_bitmapscan=off', 'enable_sort=off', 'enable_seqscan=off', 'plan_cache_mode=force_generic_plan']));
  return plan;
}

/** A sort of the per-type probes' rows (at most the limit per type), never of the ready rows. */
function isProbeSort(key: string): boolean {
  return /^([px])(_\d+)?\.priority DESC, \1(_\d+)?\.run_after, \1(_\d+)?\.id$/.test(key);
}

/** Buffers each executed Index Scan of `index` touched, from an EXPLAIN (ANALYZE, BUFFERS) plan. */
function scanBuffers(plan: string, index: string): number[] {
  const lines = plan.split('\n');
  const found: number[] = [];
  lines.forEach((line, i) => {
    if (!line.includes(`Index Scan using ${index} `) || line.includes('never executed')) return;
    const depth = line.search(/\S/);
    for (let j = i + 1; j < lines.length && lines[j].search(/\S/) > depth && !lines[j].includes('->'); j++) {
      const hit = /Buffers: shared hit=(\d+)/.exec(lines[j]);
      if (hit) found.push(Number(hit[1]));
    }
  });
  return found;
}

/** Buffers a CTE of the plan touched in all (its top node's count). */
function cteBuffers(plan: string, name: string): number {
  const at = plan.indexOf(`CTE ${name}`);
  const hit = /Buffers: shared hit=(\d+)/.exec(plan.slice(at));
  if (at < 0 || !hit) throw new Error(`no buffers for CTE ${name} in\n${plan}`);
  return Number(hit[1]);
}

/**
 * MySQL: runs `work` on one connection inside a transaction it rolls back, and counts the index
 * entries the server looked at meanwhile: rows read, and entries tested by a pushed-down condition.
 */
async function mysqlEntriesRead<T>(
  app: QueueApp,
  work: (query: (text: string, params?: unknown[]) => Promise<any>, executor: SqlExecutor) => Promise<T>,
): Promise<{ result: T; entries: number }> {
  const runner = app.dataSource.createQueryRunner();
  const counted = async () => {
    const rows: Array<{ Variable_name: string; Value: string }> = await runner.query(
      `SHOW SESSION STATUS WHERE Variable_name LIKE 'Handler_read%' OR Variable_name = 'Handler_icp_attempts'`,
    );
    return rows.reduce((n, r) => n + Number(r.Value), 0);
  };
  try {
    await runner.query('BEGIN');
    const before = await counted();
    const result = await work((text, params) => runner.query(text, params), app.db.executorFor(runner.manager));
    return { result, entries: (await counted()) - before };
  } finally {
    await runner.query('ROLLBACK');
    await runner.release();
  }
}

/** The sort keys of every Sort node in a plan. */
function sortKeys(plan: string): string[] {
  return [...plan.matchAll(/Sort Key: (.*)/g)].map((m) => m[1].trim());
}

async function explain(app: QueueApp, statement: Sql): Promise<string> {
  const rows = await explainRows(app, statement);
  return rows.map((r) => Object.values(r).join(' ')).join('\n');
}

async function explainRows(app: QueueApp, statement: Sql): Promise<Record<string, unknown>[]> {
  const d = app.db.dialect.name;
  const { text, params } = statement.render(d);
  return app.dataSource.query((d === 'sqlite' ? 'EXPLAIN QUERY PLAN ' : 'EXPLAIN ') + text, params);
}

describeDialects('the claim reads the ready index only', (db) => {
  let app: QueueApp;
  let fresh = '';
  let freshStatement = '';
  const request: ClaimRequest = { owner: 'w', types: ['t'], quotas: [{ limit: 10 }], leaseTtlMs: 30_000, start: true };
  const grouped: ClaimRequest = { ...request, quotas: [{ group: 'g', limit: 10 }] };

  beforeAll(async () => {
    app = await startQueueApp(db, { externalTypes: ['t'] });
    if (db.dialect === 'postgres') {
      // A never-analyzed table with a burst of ready rows: the case that made claims sort
      // every ready row before the function pinned the plan.
      await app.queue.enqueueGraph(Array.from({ length: 5_000 }, (_, i) => ({ ref: `burst${i}`, type: 't' })));
      fresh = await explainClaimFunction(app, { groups: [], limits: [], any: 10 });
      // The claim as statements (under caps or rate limits), planned ad hoc: the same index.
      freshStatement = await explain(app, claimCandidatesStatement(app.db.dialect, ['t'], { limit: 10 }));
      await app.rows(`DELETE FROM jobs`);
    }
    await fillRows(app, DONE_ROWS, 't', 'done');
    await app.queue.enqueueGraph(Array.from({ length: 50 }, (_, i) => ({ ref: `r${i}`, type: 't', group: i % 2 ? 'g' : 'h' })));
  }, 300_000);
  afterAll(() => app?.close());

  it(`with ${DONE_ROWS.toLocaleString('en')} done rows in the table`, async () => {
    const d = db.dialect;
    if (d === 'postgres') {
      const plan = await explainClaimFunction(app, { groups: [], limits: [], any: 10 });
      // Each type's stretch of the ready index, in its order; the one sort is of the probes' rows.
      for (const p of [await explain(app, claimCandidatesStatement(app.db.dialect, ['t'], { limit: 10 })), freshStatement]) {
        expect(p).toMatch(/Index Scan using jobs_ready_idx on jobs/);
        expect(p).not.toMatch(/Seq Scan on jobs|Bitmap|Sort/);
      }
      const several = await explain(app, claimCandidatesStatement(app.db.dialect, ['t', 'u'], { limit: 10 }));
      expect(several).toMatch(/Index Scan using jobs_ready_idx on jobs/);
      expect(several).not.toMatch(/Seq Scan on jobs|Bitmap/);
      expect(sortKeys(several).every(isProbeSort)).toBe(true);
      for (const p of [plan, fresh]) {
        // Each priority's due range of the type (migration 32): it ends at the first job due later.
        expect(p).toMatch(
          /Index Scan using jobs_ready_idx on jobs \w+ .*\n\s+Index Cond: \(\(\(type\)::text = t(_\d+)?\.type\) AND \(priority = lv(_\d+)?\.priority\) AND \(run_after <= now\(\)\)\)/,
        );
        expect(p).not.toMatch(/Seq Scan on jobs|Bitmap|JIT/);
        expect(sortKeys(p).every(isProbeSort)).toBe(true);
      }
      const groupPlan = await explainClaimFunction(app, { groups: ['g'], limits: [10], any: 0 });
      // The group's rows of each type from the (group, type) ready index, in its order.
      expect(groupPlan).toMatch(
        /Index Scan using jobs_ready_group_idx on jobs \w+ .*\n\s+Index Cond: \(\(\(group_key\)::text = q\.group_key\) AND \(\(type\)::text = t(_\d+)?\.type\) AND \(priority = lv(_\d+)?\.priority\) AND \(run_after <= now\(\)\)\)/,
      );
      expect(groupPlan).not.toMatch(/Seq Scan on jobs|Bitmap|JIT/);
      expect(sortKeys(groupPlan).every(isProbeSort)).toBe(true);
      // No hash table: the generic plan sizes one by its estimate of the ready rows (a 3 MB
      // aggregate for UNION's dedupe at 100,000), cleared and walked on every call (migration 23).
      const both = await explainClaimFunction(app, { groups: ['g'], limits: [10], any: 10 });
      for (const p of [plan, fresh, groupPlan, both]) expect(p).not.toMatch(/Hash/);
    } else if (d === 'mysql') {
      const [plan] = await explainRows(app, claimCandidatesStatement(app.db.dialect, request.types, request.quotas[0]));
      expect(plan.key).toBe('jobs_ready_idx');
      expect(String(plan.Extra)).not.toMatch(/filesort/); // InnoDB walks the index in ORDER BY order
      expect(Number(plan.rows)).toBeLessThan(1_000);
      const [gplan] = await explainRows(app, claimCandidatesStatement(app.db.dialect, grouped.types, grouped.quotas[0]));
      expect(gplan.key).toBe('jobs_ready_group_idx');
      expect(String(gplan.Extra)).not.toMatch(/filesort/);
    } else {
      // A claim picks its ids, then leases by primary key; quotas above UNSIZED_UP_TO read the
      // args' sizes with the same probe.
      expect(request.quotas[0].limit).toBeLessThanOrEqual(UNSIZED_UP_TO);
      // A claim of one type reads its top priority, then the priorities below it (sqliteLevels).
      const levels = (level: 't' | 'b') => new Map(request.types.map((t) => [t, { read: [level === 't' ? 'top' : 'below'] as const }]));
      for (const sized of [false, true]) {
        const statement = (d: typeof app.db.dialect, r: typeof request, q: (typeof request.quotas)[0], l: ReturnType<typeof levels>) => sqlitePickStatement(d, r, q, l, sized);
        for (const level of ['t', 'b'] as const) {
          const plan = await explain(app, statement(app.db.dialect, request, request.quotas[0], levels(level)));
          expect(plan).toMatch(/USING (COVERING )?INDEX jobs_ready_idx/);
          expect(plan).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
          const gplan = await explain(app, statement(app.db.dialect, grouped, grouped.quotas[0], levels(level)));
          expect(gplan).toMatch(/USING (COVERING )?INDEX jobs_ready_group_idx \(group_key=\? AND type=\?/);
          expect(gplan).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
        }
      }
      const lease = await explain(app, sqliteLeaseByIds(app.db.dialect, request, [3, 1, 2]));
      expect(lease).toMatch(/SEARCH jobs USING INTEGER PRIMARY KEY \(rowid=\?\)/);
      expect(lease).not.toMatch(/SCAN jobs/);
    }
  });

});

const BACKLOG = 200_000;

describeDialects('a claim reads no ready row of a type it does not handle', (db) => {
  let app: QueueApp;
  let claims: ClaimService;
  const TYPES = Array.from({ length: 60 }, (_, i) => `t${i}`);

  beforeAll(async () => {
    app = await startQueueApp(db, { externalTypes: [...TYPES, 'other'] });
    claims = app.module.get(ClaimService);
    await fillRows(app, BACKLOG, 'other', 'ready'); // older than every job the spec enqueues
  }, 300_000);
  afterAll(() => app?.close());
  beforeEach(() => app.rows(`DELETE FROM jobs WHERE type <> 'other'`));

  it(`takes the best jobs across its types by priority, then age, past ${BACKLOG.toLocaleString('en')} ready jobs of another type`, async () => {
    // t0..t2 interleaved with mixed priorities; the claim of 5 must be the global best five.
    const nodes = Array.from({ length: 30 }, (_, i) => ({ ref: `n${i}`, type: `t${i % 3}`, priority: [0, 5, 1][i % 3] + (i === 29 ? 10 : 0) }));
    const ids = await app.queue.enqueueGraph(nodes);
    const expected = nodes
      .map((n) => ({ id: ids[n.ref], priority: n.priority }))
      .sort((a, b) => b.priority - a.priority || a.id - b.id)
      .slice(0, 5)
      .map((j) => j.id);
    const got = await claims.claim({ owner: 'w', types: ['t0', 't1', 't2'], quotas: [{ limit: 5 }], leaseTtlMs: 30_000, start: true });
    expect(got.map((j) => j.id)).toEqual(expected);
    expect(await app.count(`type = 'other' AND state = 'ready'`)).toBe(BACKLOG);
  });

  it('over more types than one statement probes (60), still the global best', async () => {
    // One job per type, the best in the last types, so that every slice has to be read.
    const nodes = TYPES.map((type, i) => ({ ref: type, type, priority: i >= 55 ? 100 + i : i % 7 }));
    const ids = await app.queue.enqueueGraph(nodes);
    const expected = nodes
      .map((n) => ({ id: ids[n.ref], priority: n.priority }))
      .sort((a, b) => b.priority - a.priority || a.id - b.id)
      .slice(0, 8)
      .map((j) => j.id);
    const got = await claims.claim({ owner: 'w', types: TYPES, quotas: [{ limit: 8 }], leaseTtlMs: 30_000, start: true });
    expect(got.map((j) => j.id)).toEqual(expected);
    // The rows read beyond the quota were released: the rest is claimable at once.
    const rest = await claims.claim({ owner: 'w2', types: TYPES, quotas: [{ limit: 100 }], leaseTtlMs: 30_000, start: true });
    expect(rest).toHaveLength(TYPES.length - 8);
  });

  it('a worker of 1,500 types, few with due work: the global best of those, never a delayed job, every group quota too', async () => {
    // Past one statement's type check (1,000) and with far more types than rows: the claim asks
    // which types have ready rows first (SQLite, and MySQL's floors), then reads only those.
    const many = [...Array.from({ length: 1_440 }, (_, i) => `x${i}`), ...TYPES];
    const later = new Date(Date.now() + 3_600_000);
    const nodes = [
      { ref: 'a', type: 't3', priority: 1, group: 'g1' },
      { ref: 'b', type: 't41', priority: 7, group: 'g2' },
      { ref: 'c', type: 't59', priority: 7, group: 'g1' },
      { ref: 'd', type: 't59', priority: 2, group: 'g2' },
      { ref: 'late', type: 't20', priority: 100, runAfter: later, group: 'g1' },
      { ref: 'e', type: 't3', priority: 0, group: 'g1' },
    ];
    const ids = await app.queue.enqueueGraph(nodes);
    const claim = (owner: string, quotas: Array<{ limit: number; group?: string }>) =>
      claims.claim({ owner, types: many, quotas, leaseTtlMs: 30_000, start: true });
    expect((await claim('w1', [{ limit: 3 }])).map((j) => j.id)).toEqual([ids.b, ids.c, ids.d]);
    expect((await claim('w2', [{ limit: 5, group: 'g1' }])).map((j) => j.id)).toEqual([ids.a, ids.e]);
    expect(await claim('w3', [{ limit: 5 }])).toEqual([]);
    expect(await app.count(`id = ${ids.late} AND state = 'ready'`)).toBe(1);
  });

  it('the planner walks the groups of its types by (group, type) pairs, not by rows', async () => {
    // The backlog sits in group 'default'; the worker's own jobs in 'a', 'default' and 'z', one delayed.
    await app.queue.enqueueGraph([
      { ref: 'a', type: 't0', group: 'a', weight: 3 },
      { ref: 'd', type: 't1', group: 'default' },
      { ref: 'm', type: 't0', group: 'm', runAfter: new Date(Date.now() + 3_600_000) },
      { ref: 'z', type: 't1', group: 'z', weight: 2 },
    ]);
    const d = app.db.dialect;
    const reads = (tx: SqlExecutor) => tx.run(sqlOf`SHOW SESSION STATUS LIKE 'Handler_read%'`).then((r) => r.rows.reduce((n, row) => n + Number(row.Value), 0));
    let serverReads = 0;
    const groups = await app.db.transaction(async (tx) => {
      const before = d.name === 'mysql' ? await reads(tx) : 0;
      const out = await readyGroups(tx, ['t0', 't1'], 11);
      serverReads = d.name === 'mysql' ? (await reads(tx)) - before : 0;
      return out;
    });
    expect(groups).toEqual([
      { group: 'a', weight: 3 },
      { group: 'default', weight: 1 },
      { group: 'z', weight: 2 },
    ]);
    expect(await readyGroups(app.db, ['t0', 't1'], 2)).toEqual([
      { group: 'a', weight: 3 },
      { group: 'default', weight: 1 },
    ]);
    // Five pairs and three due jobs, not 200,000 rows.
    if (d.name === 'mysql') expect(serverReads).toBeLessThan(100);
    if (d.name === 'sqlite') {
      const plan = await explain(app, pairAfter(d, { group: 'default', type: 'other' }, undefined));
      expect(plan).toMatch(/USING COVERING INDEX jobs_ready_group_idx \(group_key=\? AND type>\?\)/);
      expect(plan).toMatch(/USING COVERING INDEX jobs_ready_group_idx \(group_key>\?\)/);
      expect(plan).not.toMatch(/SCAN jobs/);
    }
    if (d.name === 'postgres') {
      // The function's walk, run for real: its probes read pairs, so a million-row group costs one.
      const rows = await app.rows(`EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM job_queue_ready_groups('{t0,t1}', '', NULL, 11)`);
      const plan = rows.map((r) => Object.values(r).join(' ')).join('\n');
      const [, hit, read] = /Buffers: shared hit=(\d+)(?: read=(\d+))?/.exec(plan) ?? [];
      expect(Number(hit) + Number(read ?? 0)).toBeLessThan(200); // the backlog spans ~2,000 pages
    }
  });

  it('the rotation and group quotas take each group\'s best job of its types, past the backlog in the same group', async () => {
    // Groups 'default' (with the backlog), 'g1', 'g2'; in each, t1's job outranks t0's.
    const nodes = ['default', 'g1', 'g2'].flatMap((group) => [
      { ref: `${group}-t0`, type: 't0', group },
      { ref: `${group}-t1`, type: 't1', group, priority: 5 },
      { ref: `${group}-t1b`, type: 't1', group, priority: 1 },
    ]);
    const ids = await app.queue.enqueueGraph(nodes);
    const rotated = await claims.claim({ owner: 'w', types: ['t0', 't1'], quotas: [], rotation: 3, leaseTtlMs: 30_000, start: true });
    expect(rotated.map((j) => j.id).sort((a, b) => a - b)).toEqual([ids['default-t1'], ids['g1-t1'], ids['g2-t1']].sort((a, b) => a - b));
    const quota = await claims.claim({ owner: 'w', types: ['t0', 't1'], quotas: [{ group: 'default', limit: 2 }], leaseTtlMs: 30_000, start: true });
    expect(quota.map((j) => j.id)).toEqual([ids['default-t1b'], ids['default-t0']]);
    expect(await app.count(`type = 'other' AND state = 'ready'`)).toBe(BACKLOG);
  });

  it('a group quota and the any-group quota over the same jobs lease each job once', async () => {
    const ids = Object.values(await app.queue.enqueueGraph(Array.from({ length: 30 }, (_, i) => ({ ref: `j${i}`, type: 't0', group: i < 20 ? 'g' : 'h' }))));
    // Group g's 20, then the best 25 of any group: g's 20 again (this claim's own locks do not
    // skip them) and h's 10. Each job once, leased once.
    const claimed = await claims.claim({ owner: 'w', types: ['t0'], quotas: [{ group: 'g', limit: 20 }, { limit: 25 }], leaseTtlMs: 30_000, start: true });
    const claimedIds = claimed.map((j) => j.id);
    expect(new Set(claimedIds).size).toBe(claimedIds.length);
    expect(claimedIds.length).toBeGreaterThanOrEqual(25);
    expect(claimedIds.every((id) => ids.includes(id))).toBe(true);
    const rows = await app.rows(`SELECT attempts, state FROM jobs WHERE type = 't0' AND state <> 'ready'`);
    expect(rows).toHaveLength(claimedIds.length);
    expect(rows.every((r) => Number(r.attempts) === 1 && r.state === 'running')).toBe(true);
  });

  it('reads at most its limit per type (the plan, and on MySQL the rows the server read)', async () => {
    await app.queue.enqueueGraph(Array.from({ length: 50 }, (_, i) => ({ ref: `r${i}`, type: `t${i % 2}` })));
    const d = app.db.dialect;
    if (d.name === 'postgres') {
      const { plan } = await explainFunctionBody(
        app,
        'job_queue_claim',
        'text, text[], text[], int[], int, float8, boolean',
        `'w', '{t0,t1}', '{}', '{}', 10, 30000, true`,
        true,
      );
      const scans = [...plan.matchAll(/Index Scan using jobs_ready_idx on jobs \w+ .*actual time=[\d.]+\.\.[\d.]+ rows=(\d+) loops=(\d+)/g)];
      expect(scans).toHaveLength(1);
      expect(Number(scans[0][1]) * Number(scans[0][2])).toBeLessThanOrEqual(20); // two probes of at most 10
      expect(plan).not.toMatch(/Rows Removed by Filter/);
    } else if (d.name === 'mysql') {
      const runner = app.dataSource.createQueryRunner();
      try {
        await runner.query('BEGIN');
        const read = async () => {
          const rows: Array<{ Variable_name: string; Value: string }> = await runner.query(`SHOW SESSION STATUS LIKE 'Handler_read%'`);
          return rows.reduce((n, r) => n + Number(r.Value), 0);
        };
        const before = await read();
        const { text, params } = claimCandidatesStatement(d, ['t0', 't1'], { limit: 10 }).render('mysql');
        const rows = await runner.query(text, params);
        const after = await read();
        expect(rows).toHaveLength(10);
        // Two arms of at most 10 rows each, plus the index dives and the status query itself.
        expect(after - before).toBeLessThan(100);
      } finally {
        await runner.query('ROLLBACK');
        await runner.release();
      }
    } else {
      const plan = await explain(app, sqlitePickStatement(d, { ...request2, types: ['t0', 't1'] }, { limit: 10 }, undefined, true));
      expect(plan).toMatch(/USING (COVERING )?INDEX jobs_ready_idx \(type=\?\)/);
      expect(plan).not.toMatch(/SCAN jobs/);
    }
  });

  it('reads due jobs first: jobs of its type due later, enqueued ahead of them, cost a claim nothing', async () => {
    // Scheduled jobs (and retries backing off) of the worker's own type, enqueued before the due
    // ones: claim order is priority, then due time, then id, and the ready indexes follow it, so
    // the due jobs come first in the index and a claim of 10 reads 10 entries, not the 2,000.
    const later = new Date(Date.now() + 86_400_000);
    for (let s = 0; s < 2_000; s += 500) {
      await app.queue.enqueueGraph(Array.from({ length: 500 }, (_, i) => ({ ref: `l${i}`, type: 't0', runAfter: later })));
    }
    const due = Object.values(await app.queue.enqueueGraph(Array.from({ length: 30 }, (_, i) => ({ ref: `d${i}`, type: 't0' }))));
    const d = app.db.dialect;
    if (d.name === 'postgres') {
      const { plan } = await explainFunctionBody(app, 'job_queue_claim', 'text, text[], text[], int[], int, float8, boolean', `'w', '{t0}', '{}', '{}', 10, 30000, true`, 'buffers');
      expect(plan).toMatch(/Index Scan using jobs_ready_idx on jobs[\s\S]*Index Cond: \(.*run_after <= now\(\)/);
      expect(plan).not.toMatch(/Rows Removed by Filter/);
      // The scan's pages: the index's root and first leaf, the 10 rows' heap page. Stepping over
      // the 2,000 later entries read every leaf of the type (13 here, before the order changed).
      const pages = scanBuffers(plan, 'jobs_ready_idx');
      expect(pages.length).toBeGreaterThanOrEqual(1); // the any-group probes; the group quotas' never ran
      expect(pages.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(12);
      // Asking for more than is due (an idle poll, a trickle): the due range of the priority ends
      // at the first later entry, and a probe finds no lower priority. 20,000 later entries here;
      // one pass over them read 130 pages more.
      await app.rows(`INSERT INTO jobs (type, args, state, group_key, weight, priority, run_after, attempts, max_attempts, created_at, updated_at)
        SELECT 't0', '{}', 'ready', 'default', 1, 0, now() + interval '1 day', 0, 3, now(), now() FROM generate_series(1, 18000)`);
      await app.rows(`ANALYZE jobs`);
      const short = await explainFunctionBody(app, 'job_queue_claim', 'text, text[], text[], int[], int, float8, boolean', `'w', '{t0}', '{}', '{}', 40, 30000, true`, 'buffers');
      // 30 rows found and locked (a buffer access each), the skip scan's two probes: 42 here.
      expect(cteBuffers(short.plan, 'any_group')).toBeLessThanOrEqual(60);
    } else if (d.name === 'mysql') {
      // The floor read and the locking read from it: index entries the server looked at, each
      // counted once (a read, or an entry tested by the pushed-down run_after condition).
      const { result: rows, entries } = await mysqlEntriesRead(app, async (query) => {
        const f = readyFloorsStatement(d, ['t0'], {}).render('mysql');
        const floors = toReadyFloors(await query(f.text, f.params));
        expect(floors.get('t0')?.id).toBe(Math.min(...due));
        const { text, params } = claimCandidatesStatement(d, ['t0'], { limit: 10 }, undefined, false, floors).render('mysql');
        return query(text, params);
      });
      expect(rows.map((r: { id: number }) => Number(r.id))).toEqual(due.slice(0, 10));
      expect(entries).toBeLessThan(100);
    } else {
      // The pick of a claim (ids in claim order) is answered by the index alone, run_after included.
      expect(await explain(app, sqlitePickStatement(d, request2, { limit: 10 }))).toMatch(/USING COVERING INDEX jobs_ready_idx \(type=\?\)/);
    }
    const got = await claims.claim({ owner: 'w', types: ['t0'], quotas: [{ limit: 20 }], leaseTtlMs: 30_000, start: true });
    expect(got.map((j) => j.id)).toEqual(due.slice(0, 20));
    // Nothing due any more (an idle poll): the claim and the rotation walk look at a few entries,
    // not the 2,000 later ones (MySQL reads priority 0 as a range that ends at the first of them).
    expect((await claims.claim({ owner: 'w', types: ['t0'], quotas: [{ limit: 20 }], leaseTtlMs: 30_000, start: true })).map((j) => j.id)).toEqual(due.slice(20));
    if (d.name === 'mysql') {
      const { entries } = await mysqlEntriesRead(app, async (query) => {
        const f = readyFloorsStatement(d, ['t0'], {}).render('mysql');
        expect(toReadyFloors(await query(f.text, f.params))).toEqual(new Map()); // a head due later: no floor
        const front = claimCandidatesStatement(d, ['t0'], { limit: 10 }).render('mysql');
        expect(await query(front.text, front.params)).toEqual([]);
        await query(`CALL job_queue_cursor_walk('fair-share:spec', '["t0"]', 5, NULL)`);
        await query(`CALL job_queue_cursor_walk_floors('fair-share:spec', '["t0"]', 5, NULL)`);
      });
      expect(entries).toBeLessThan(100);
      // Jobs due later at a higher priority too: the walks look below the pair's delayed head head
      // by head (one pass below it read all 2,000 of priority 0 here).
      await app.queue.enqueueGraph(Array.from({ length: 500 }, (_, i) => ({ ref: `h${i}`, type: 't0', priority: 3, runAfter: later })));
      const walks = await mysqlEntriesRead(app, async (query) => {
        await query(`CALL job_queue_cursor_walk('fair-share:spec', '["t0"]', 5, NULL)`);
        await query(`CALL job_queue_cursor_walk_floors('fair-share:spec', '["t0"]', 5, NULL)`);
      });
      expect(walks.entries).toBeLessThan(100);
      // So do the plain claim's floors, of one type and of four (their correlated form): one pass
      // below priority 3 read its 500 (and the correlated probes the 2,000 of 0 as well).
      for (const types of [['t0'], ['t0', 't1', 't2', 't3']]) {
        const floors = await mysqlEntriesRead(app, async (_query, executor) => selectClaimCandidates(executor, { ...request2, types }, true));
        expect(floors.result).toEqual([]);
        expect(floors.entries).toBeLessThan(100);
      }
    } else if (d.name === 'sqlite') {
      // SQLite reads the type's top priority as an index range that ends at the first job due
      // later, then the priorities below it (none here, an empty range); the check of which
      // types have due rows probes the same ranges. One pass had run_after as a filter only, and
      // stepped over every later entry whenever fewer jobs were due than asked for.
      const top = await explain(app, sqlitePickStatement(d, request2, { limit: 20 }, new Map([['t0', { read: ['top'] as const }]])));
      expect(top).toMatch(/COVERING INDEX jobs_ready_idx \(type=\? AND priority=\? AND run_after<\?\)/);
      const below = await explain(app, sqlitePickStatement(d, request2, { limit: 20 }, new Map([['t0', { read: ['below'] as const }]])));
      expect(below).toMatch(/COVERING INDEX jobs_ready_idx \(type=\? AND priority<\?\)/);
      // Below the top, a claim of one type reads each next priority's head: one index entry.
      expect(await explain(app, sqliteHeadStatement(d, sqlOf`priority`, 't0', undefined, 5))).toMatch(/COVERING INDEX jobs_ready_idx \(type=\? AND priority<\?\)/);
      expect(await explain(app, sqliteHeadStatement(d, sqlOf`priority`, 't0', 'g', 5))).toMatch(/COVERING INDEX jobs_ready_group_idx \(group_key=\? AND type=\? AND priority<\?\)/);
      const check = await explain(app, dueLevelsStatement(d, ['t0', 't1']));
      expect(check).toMatch(/COVERING INDEX jobs_ready_idx \(type=\? AND priority=\? AND run_after<\?\)/);
      expect(check).not.toMatch(/SCAN jobs/);
      // The rotation's read of a group's next job, head by head: one entry per priority looked at.
      expect(await explain(app, sqliteHeadStatement(d, sqlOf`id, priority, run_after`, 't0', 'g', 5))).toMatch(
        /SEARCH jobs USING COVERING INDEX jobs_ready_group_idx \(group_key=\? AND type=\? AND priority<\?\)/,
      );
      // The first check, of many types, is one probe of each (due or not: no later entry read).
      expect(await explain(app, readyTypesStatement(d, ['t0', 't1']))).toMatch(/SEARCH jobs EXISTS USING COVERING INDEX jobs_ready_idx \(type=\?\)/);
    }
  });
});

const request2: ClaimRequest = { owner: 'w', types: ['t0'], quotas: [{ limit: 10 }], leaseTtlMs: 30_000, start: true };

// The finalize side of the same planner problem; PostgreSQL only, where it was found.
describeDialects(
  'a finalize probes the primary key per job',
  (db) => {
    let app: QueueApp;
    beforeAll(async () => {
      app = await startQueueApp(db, { externalTypes: ['t'] });
    });
    afterAll(() => app?.close());

    const explainComplete = (ids: number[]) =>
      explainFunctionBody(
        app,
        'job_queue_complete',
        'text, bigint[], text[], boolean',
        `'w', '{${ids.join(',')}}', '{${ids.map(() => 'null').join(',')}}', true`,
      );

    it('planned on an empty, never-analyzed table (the plan a session freezes at its first call)', async () => {
      // Both functions plan once per session, at their first call: often on a fresh, empty
      // table, where a sequential scan looks cheapest and would then read the whole table on
      // every later call.
      expect(await app.count()).toBe(0);
      const claim = await explainClaimFunction(app, { groups: ['g'], limits: [10], any: 10 });
      expect(claim).not.toMatch(/Seq Scan on jobs/);
      const { plan } = await explainComplete([1, 2, 3]);
      expect(plan).toMatch(/Index Scan using jobs_pkey on jobs/);
      expect(plan).not.toMatch(/Seq Scan on jobs|Seq Scan on job_deps/);
    });

    it('with thousands of other jobs in flight, dependents waiting, and statistics from a quiet moment', async () => {
      // 3,000 chains of 3 (6,000 edges), analyzed, then every chain head in flight. Before the
      // guard was made unmatchable, each finalize scanned every in-flight row of every worker
      // (7 ms for 10 jobs among 3,000 in flight, instead of 0.3 ms); before the function pinned
      // index paths, its promotion sequentially scanned jobs and job_deps per batch (chains of
      // jobs ran at 3k jobs/s, with PostgreSQL using a whole core).
      const nodes = [];
      for (let c = 0; c < 3_000; c++) for (let i = 0; i < 3; i++) nodes.push({ ref: `f${c}_${i}`, type: 't', dependsOn: i ? [`f${c}_${i - 1}`] : [] });
      const ids = await app.queue.enqueueGraph(nodes);
      await app.rows(`ANALYZE jobs`);
      await app.rows(`ANALYZE job_deps`);
      const claimed = await app.module.get(ClaimService).claim({ owner: 'w', types: ['t'], quotas: [{ limit: 3_000 }], leaseTtlMs: 30_000, start: true });
      expect(claimed).toHaveLength(3_000);
      const batch = Array.from({ length: 10 }, (_, c) => ids[`f${c}_0`]);
      const { plan, config } = await explainComplete(batch);
      expect(config).toEqual(expect.arrayContaining(['plan_cache_mode=force_generic_plan', 'enable_seqscan=off']));
      expect(plan).toMatch(/Index Scan using jobs_pkey on jobs/);
      expect(plan).toMatch(/job_deps_depends_on_idx/);
      expect(plan).not.toMatch(/jobs_in_flight_idx|Seq Scan on jobs|Seq Scan on job_deps/);
    });
  },
  ['postgres'],
);
