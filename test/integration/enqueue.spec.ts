import { DataSource } from 'typeorm';
import {
  ArgsNotSerializableError,
  DependencyCycleError,
  DuplicateKeyError,
  DuplicateRefError,
  ExistingParentError,
  FailedUpstreamJobError,
  InvalidJobError,
  JobQueueService,
  KeyConflictError,
  MissingUpstreamJobError,
  ParentDependencyConflictError,
  SelfDependencyError,
  UnknownDependencyError,
  UnknownJobTypeError,
  type GraphNode,
} from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

const TYPES = ['fetch', 'render', 'mail', 'noop', `t'; DROP TABLE jobs; --😀`];

describeDialects('enqueue and enqueueGraph', (db) => {
  let app: QueueApp;
  let queue: JobQueueService;

  beforeAll(async () => {
    app = await startQueueApp(db, { externalTypes: TYPES });
    queue = app.queue;
  });
  afterAll(() => app?.close());
  beforeEach(() => resetTables(app));

  it('enqueues one job and returns its view', async () => {
    const runAfter = new Date(Date.now() + 60_000);
    const job = await queue.enqueue({ type: 'render', args: { reportId: 'r1', n: [1, 2] }, group: 'tenant-a', priority: 5, runAfter });
    expect(job).toMatchObject({
      type: 'render',
      state: 'ready',
      args: { reportId: 'r1', n: [1, 2] },
      result: null,
      attempts: 0,
      maxAttempts: 3,
      group: 'tenant-a',
      priority: 5,
      parentId: null,
      isContainer: false,
      progress: 0,
      currentStage: null,
      lastError: null,
      startedAt: null,
      finishedAt: null,
    });
    expect(job.id).toBeGreaterThan(0);
    expect(Math.abs(job.runAfter.getTime() - runAfter.getTime())).toBeLessThan(2);
    expect(Math.abs(job.createdAt.getTime() - Date.now())).toBeLessThan(5_000);
    expect(await queue.get(job.id)).toEqual(job);
    expect(await queue.get(999_999)).toBeNull();
  });

  it('stores quotes, SQL fragments and emoji verbatim', async () => {
    const text = `it's "quoted"; DELETE FROM jobs; -- 😀 \\n`;
    const job = await queue.enqueue({ type: TYPES[4], group: text, key: text, args: { text } });
    const back = await queue.get(job.id);
    expect(back).toMatchObject({ type: TYPES[4], group: text, key: text, args: { text } });
  });

  it('returns the existing job for an existing key', async () => {
    const a = await queue.enqueue({ type: 'noop', key: 'daily-2026-11-29' });
    const b = await queue.enqueue({ type: 'noop', key: 'daily-2026-11-29', args: { other: true } });
    expect(b.id).toBe(a.id);
    expect(b.args).toBeNull();
    expect(await app.count()).toBe(1);
  });

  it('dedups keys under concurrent enqueues', async () => {
    const jobs = await Promise.all(Array.from({ length: 8 }, () => queue.enqueue({ type: 'noop', key: 'race' })));
    expect(new Set(jobs.map((j) => j.id)).size).toBe(1);
    expect(await app.count()).toBe(1);
  });

  it('writes a graph: ready roots, waiting dependents with open-dependency counts, containers', async () => {
    const ids = await queue.enqueueGraph([
      { ref: 'fetch', type: 'fetch', args: { url: 'u' }, group: 'tenant-a' },
      { ref: 'render', type: 'render', dependsOn: ['fetch'] },
      { ref: 'batch', type: 'batch' },
      { ref: 'mail', type: 'mail', parent: 'batch', dependsOn: ['render'] },
    ]);
    expect(Object.keys(ids)).toEqual(['fetch', 'render', 'batch', 'mail']);
    const rows = await app.rows(`SELECT id, ref, state, pending_deps, pending_children, is_container, parent_id FROM jobs ORDER BY id`);
    const byRef = Object.fromEntries(rows.map((r) => [r.ref, r]));
    expect(byRef.fetch).toMatchObject({ state: 'ready' });
    expect(Number(byRef.render.pending_deps)).toBe(1);
    expect(byRef.render.state).toBe('waiting');
    expect(byRef.batch.state).toBe('waiting');
    expect(Number(byRef.batch.pending_children)).toBe(1);
    expect(Number(byRef.batch.is_container)).toBe(1);
    expect(Number(byRef.mail.parent_id)).toBe(ids.batch);
    const deps = await app.rows(`SELECT job_id, depends_on_id FROM job_deps ORDER BY job_id`);
    expect(deps.map((d) => [Number(d.job_id), Number(d.depends_on_id)])).toEqual([
      [ids.render, ids.fetch],
      [ids.mail, ids.render],
    ]);
    const batch = await queue.get(ids.batch);
    expect(batch).toMatchObject({ isContainer: true, ref: 'batch', state: 'waiting' });
  });

  it('depends on existing jobs by id: done ones are not waited for', async () => {
    const done = await queue.enqueue({ type: 'noop' });
    const open = await queue.enqueue({ type: 'noop' });
    await app.rows(`UPDATE jobs SET state = 'done' WHERE id = ${done.id}`);
    const ids = await queue.enqueueGraph([
      { ref: 'a', type: 'noop', dependsOn: [done.id] },
      { ref: 'b', type: 'noop', dependsOn: [done.id, open.id] },
    ]);
    expect((await queue.get(ids.a))?.state).toBe('ready');
    expect((await queue.get(ids.b))?.state).toBe('waiting');
  });

  it('makes a keyed graph idempotent', async () => {
    const graph: GraphNode[] = [
      { ref: 'box', type: 'batch', key: 'g1-box' },
      { ref: 'x', type: 'noop', parent: 'box', key: 'g1-x' },
      { ref: 'y', type: 'noop', dependsOn: ['x'], key: 'g1-y' },
    ];
    const first = await queue.enqueueGraph(graph);
    const second = await queue.enqueueGraph(graph);
    expect(second).toEqual(first);
    expect(await app.count()).toBe(3);
  });

  it('an existing job reached by key and by id (or through a container) is one edge and one open dependency', async () => {
    const up = await queue.enqueue({ type: 'noop', key: 'up-once' });
    // Before: each failed on job_deps' primary key with a raw database error (after two retries).
    const ids = await queue.enqueueGraph([
      { ref: 'up', type: 'noop', key: 'up-once' },
      { ref: 'down', type: 'noop', dependsOn: ['up', up.id] },
      { ref: 'box', type: 'batch', dependsOn: [up.id] },
      { ref: 'inside', type: 'noop', parent: 'box', dependsOn: ['up'] },
    ]);
    expect(ids.up).toBe(up.id);
    const deps = await app.rows(`SELECT job_id, depends_on_id FROM job_deps ORDER BY job_id`);
    expect(deps.map((r) => [Number(r.job_id), Number(r.depends_on_id)])).toEqual([
      [ids.down, up.id],
      [ids.box, up.id],
      [ids.inside, up.id],
    ]);
    const pending = await app.rows(`SELECT id, pending_deps FROM jobs WHERE id IN (${ids.down}, ${ids.inside}) ORDER BY id`);
    expect(pending.map((r) => Number(r.pending_deps))).toEqual([1, 1]);
  });

  it('stores runAfter at the ends of its range exactly, and orders them', async () => {
    const early = await queue.enqueue({ type: 'noop', runAfter: new Date('1000-01-01T00:00:00.000Z') });
    const late = await queue.enqueue({ type: 'noop', runAfter: new Date('9999-12-31T23:59:59.999Z') });
    expect((await queue.get(early.id))?.runAfter.toISOString()).toBe('1000-01-01T00:00:00.000Z');
    expect((await queue.get(late.id))?.runAfter.toISOString()).toBe('9999-12-31T23:59:59.999Z');
    const due = await app.rows(`SELECT id FROM jobs WHERE run_after <= ${db.dialect === 'sqlite' ? "strftime('%Y-%m-%d %H:%M:%f', 'now')" : 'CURRENT_TIMESTAMP'}`);
    expect(due.map((r) => Number(r.id))).toEqual([early.id]);
  });

  describe('bad input writes nothing', () => {
    let existing: number;
    let failed: number;
    beforeEach(async () => {
      existing = (await queue.enqueue({ type: 'noop', key: 'existing-box' })).id;
      failed = (await queue.enqueue({ type: 'noop' })).id;
      await app.rows(`UPDATE jobs SET state = 'failed' WHERE id = ${failed}`);
    });

    const circular: Record<string, unknown> = {};
    circular.me = circular;
    const cases: Array<[string, () => GraphNode[], new (...a: never[]) => Error]> = [
      ['duplicate ref', () => [{ ref: 'a', type: 'noop' }, { ref: 'a', type: 'noop' }], DuplicateRefError],
      // Before: a raw unique violation on jobs.job_key, and on job_deps for the key that exists.
      ['one new key on two nodes', () => [{ ref: 'a', type: 'noop', key: 'twice' }, { ref: 'b', type: 'noop', key: 'twice' }], DuplicateKeyError],
      ['one existing key on two nodes, both depended on', () => [{ ref: 'a', type: 'noop', key: 'existing-box' }, { ref: 'b', type: 'noop', key: 'existing-box' }, { ref: 'c', type: 'noop', dependsOn: ['a', 'b'] }], DuplicateKeyError],
      ['unknown dependency', () => [{ ref: 'a', type: 'noop', dependsOn: ['ghost'] }], UnknownDependencyError],
      ['self dependency', () => [{ ref: 'a', type: 'noop', dependsOn: ['a'] }], SelfDependencyError],
      ['cycle', () => [{ ref: 'a', type: 'noop', dependsOn: ['b'] }, { ref: 'b', type: 'noop', dependsOn: ['a'] }], DependencyCycleError],
      ['child on its container', () => [{ ref: 'c', type: 'batch' }, { ref: 'k', type: 'noop', parent: 'c', dependsOn: ['c'] }], ParentDependencyConflictError],
      ['missing upstream id', () => [{ ref: 'ok', type: 'noop' }, { ref: 'a', type: 'noop', dependsOn: [987_654] }], MissingUpstreamJobError],
      ['failed upstream id', () => [{ ref: 'a', type: 'noop', dependsOn: [failed] }], FailedUpstreamJobError],
      ['child of an existing keyed container', () => [{ ref: 'box', type: 'batch', key: 'existing-box' }, { ref: 'k', type: 'noop', parent: 'box' }], ExistingParentError],
      ['unregistered type', () => [{ ref: 'ok', type: 'noop' }, { ref: 'a', type: 'no-such-handler' }], UnknownJobTypeError],
      ['circular args', () => [{ ref: 'ok', type: 'noop' }, { ref: 'a', type: 'noop', args: circular }], ArgsNotSerializableError],
      ['negative priority', () => [{ ref: 'a', type: 'noop', priority: -1 }], InvalidJobError],
      // Before: PostgreSQL and MySQL refused it with a raw error; SQLite stored it and ran it at once.
      ['runAfter in year 10000', () => [{ ref: 'a', type: 'noop', runAfter: new Date('+010000-01-01T00:00:00Z') }], InvalidJobError],
    ];
    it.each(cases)('%s', async (_name, graph, ErrorClass) => {
      const before = await app.count();
      await expect(queue.enqueueGraph(graph())).rejects.toBeInstanceOf(ErrorClass);
      expect(await app.count()).toBe(before);
      expect(Number((await app.rows(`SELECT COUNT(*) AS n FROM job_deps`))[0].n)).toBe(0);
    });
  });

  it('joins the application transaction with { manager }', async () => {
    // The application's own DataSource on the same database; the queue shares it (postgres,
    // mysql) or opens its own connection to the same file (sqlite).
    const appDs = new DataSource(
      db.dialect === 'sqlite'
        ? { type: 'better-sqlite3', database: db.location }
        : db.dialect === 'postgres'
          ? { type: 'postgres', url: db.location }
          : { type: 'mysql', url: db.location },
    );
    await appDs.initialize();
    const shared = await startQueueApp(db, { dataSource: appDs, url: undefined, externalTypes: TYPES });
    try {
      await expect(
        appDs.transaction(async (manager) => {
          await shared.queue.enqueue({ type: 'noop', args: { n: 1 } }, { manager });
          throw new Error('business rule failed');
        }),
      ).rejects.toThrow('business rule failed');
      expect(await shared.count()).toBe(0);

      const job = await appDs.transaction((manager) => shared.queue.enqueueGraph([{ ref: 'a', type: 'noop' }, { ref: 'b', type: 'noop', dependsOn: ['a'] }], { manager }));
      expect(await shared.count()).toBe(2);
      expect((await shared.queue.get(job.b))?.state).toBe('waiting');
    } finally {
      await shared.close();
      expect(appDs.isInitialized).toBe(true); // the application's DataSource stays open
      await appDs.destroy();
    }
  });

  // PostgreSQL and MariaDB only: SQLite has one writer (the second transaction would wait for the
  // first and then see its job), and TypeORM's SQLite DataSource, one connection, refuses a second
  // transaction while one is open. Not registered there rather than skipped.
  if (db.dialect !== 'sqlite') it('two application transactions enqueueing one key at once: the loser gets KeyConflictError, its rerun the job', async () => {
    const appDs = new DataSource(db.dialect === 'postgres' ? { type: 'postgres', url: db.location } : { type: 'mysql', url: db.location });
    await appDs.initialize();
    const shared = await startQueueApp(db, { dataSource: appDs, url: undefined, externalTypes: TYPES });
    try {
      const order = (enqueue: (manager: never) => Promise<number>) =>
        appDs.transaction(async (manager) => {
          const id = await enqueue(manager as never);
          await new Promise((r) => setTimeout(r, 300)); // the rest of the request's work
          return id;
        });
      const single = (manager: never) => shared.queue.enqueue({ type: 'noop', key: 'charge:order-42' }, { manager }).then((j) => j.id);
      const graph = (manager: never) => shared.queue.enqueueGraph([{ ref: 'charge', type: 'noop', key: 'charge:order-43' }], { manager }).then((ids) => ids.charge);
      for (const enqueue of [single, graph]) {
        const outcomes = await Promise.allSettled([order(enqueue), order(enqueue)]);
        const won = outcomes.filter((o) => o.status === 'fulfilled');
        const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
        // Before: the driver's unique violation (23505 / ER_DUP_ENTRY).
        expect([won.length, lost.length]).toEqual([1, 1]);
        expect(lost[0].reason).toBeInstanceOf(KeyConflictError);
        expect(lost[0].reason).toMatchObject({ code: 'KEY_CONFLICT' });
        expect(await order(enqueue)).toBe((won[0] as PromiseFulfilledResult<number>).value);
      }
      expect(await shared.count()).toBe(2);
    } finally {
      await shared.close();
      await appDs.destroy();
    }
  });

  it('enqueues a 10,000-node graph of chains and fan-out/fan-in in one call', async () => {
    const nodes: GraphNode[] = [];
    for (let c = 0; c < 50; c++) {
      for (let i = 0; i < 100; i++) nodes.push({ ref: `c${c}.${i}`, type: 'noop', dependsOn: i ? [`c${c}.${i - 1}`] : [] });
    }
    nodes.push({ ref: 'root', type: 'noop' });
    for (let i = 0; i < 4_000; i++) nodes.push({ ref: `f${i}`, type: 'noop', dependsOn: ['root'], args: { i } });
    for (let i = 0; i < 999; i++) nodes.push({ ref: `j${i}`, type: 'noop', dependsOn: [`f${i * 4}`, `f${i * 4 + 1}`, `f${i * 4 + 2}`, `f${i * 4 + 3}`] });
    expect(nodes).toHaveLength(10_000);

    const started = performance.now();
    const ids = await queue.enqueueGraph(nodes);
    const ms = performance.now() - started;
    process.stdout.write(`[${db.dialect}] enqueueGraph of 10,000 nodes: ${ms.toFixed(0)} ms\n`);

    expect(new Set(Object.values(ids)).size).toBe(10_000);
    expect(await app.count()).toBe(10_000);
    expect(await app.count(`state = 'ready'`)).toBe(51);
    expect(Number((await app.rows(`SELECT COUNT(*) AS n FROM job_deps`))[0].n)).toBe(50 * 99 + 4_000 + 999 * 4);
    const [j] = await app.rows(`SELECT pending_deps FROM jobs WHERE id = ${ids.j998}`);
    expect(Number(j.pending_deps)).toBe(4);
  });
});
