import { jest } from '@jest/globals';
import { InvalidQueryError } from '../../lib';
import { sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { describeDialects } from '../support/describe-dialects';
import { clearProbes, finalizeCounts } from '../support/probe-tables';
import { type QueueApp } from '../support/queue-app';
import { probedEnqueuer } from '../support/probed-enqueuer';
import { eventually } from '../support/wait';
import { WorkerProcess } from '../support/worker-process';

const TYPES = ['crashy', 'wedge', 'counted', 'slow', 'noop', 'chaos'];
const UPSTREAMS = 10_000;
const FAN_IN = 10; // upstreams per dependent

describeDialects('retryMany / cancelMany', (db) => {
  let app: QueueApp;
  const workers: WorkerProcess[] = [];

  probedEnqueuer(db, { externalTypes: TYPES, workers, started: (a) => (app = a) });

  it(`re-drives ${UPSTREAMS.toLocaleString('en')} failed jobs while 2 worker processes run: each runs once, dependents re-open`, async () => {
    // 1,000 graphs: 10 upstreams → 1 dependent. Then the upstreams fail for good and the
    // dependents are cancelled, as the failure cascade leaves them.
    const graphs = UPSTREAMS / FAN_IN;
    for (let g = 0; g < graphs; g += 100) {
      const nodes = [];
      for (let k = g; k < Math.min(graphs, g + 100); k++) {
        const ups = Array.from({ length: FAN_IN }, (_, i) => ({ ref: `u${k}-${i}`, type: 'chaos', args: { ms: 0 }, group: `t${k % 7}` }));
        nodes.push(...ups, { ref: `d${k}`, type: 'chaos', args: { ms: 0 }, dependsOn: ups.map((u) => u.ref) });
      }
      await app.queue.enqueueGraph(nodes);
    }
    const now = app.db.dialect.now();
    await app.db.run(sql`UPDATE jobs SET state = 'failed', attempts = max_attempts, last_error = 'planned permanent failure', finished_at = ${now}
      WHERE id IN (SELECT depends_on_id FROM job_deps)`);
    await app.db.run(sql`UPDATE jobs SET state = 'cancelled', last_error = 'cancelled: upstream job failed', finished_at = ${now}
      WHERE state = 'waiting'`);
    expect(await app.count(`state = 'failed'`)).toBe(UPSTREAMS);
    expect(await app.count(`state = 'cancelled'`)).toBe(graphs);
    await clearProbes(app); // the audit trigger saw the planned failures: count from here

    const options = { ...db.options(), pollIntervalMs: 100, concurrency: 20 };
    workers.push(new WorkerProcess('engine.worker', options), new WorkerProcess('engine.worker', options));
    await Promise.all(workers.map((w) => w.waitFor('ready')));

    const started = Date.now();
    const { count } = await app.queue.retryMany({ state: 'failed', type: 'chaos' });
    const retryMs = Date.now() - started;
    expect(count).toBe(UPSTREAMS);
    await eventually('every job done', async () => (await app.count(`state = 'done'`)) === UPSTREAMS + graphs, 600_000, 250);
    process.stdout.write(`[${db.dialect}] retryMany of ${UPSTREAMS} failed jobs: ${retryMs} ms; all ${UPSTREAMS + graphs} done after ${Date.now() - started} ms\n`);

    // Each job ran exactly once after the re-drive (no execution before it: the failures were planned),
    // and was finalized once; both worker processes took part.
    const runs = await app.rows(`SELECT job_id, COUNT(*) AS n FROM executions GROUP BY job_id HAVING COUNT(*) <> 1`);
    expect(runs).toEqual([]);
    expect(Number((await app.rows(`SELECT COUNT(DISTINCT job_id) AS n FROM executions`))[0].n)).toBe(UPSTREAMS + graphs);
    const finalized = await finalizeCounts(app);
    expect(finalized.size).toBe(UPSTREAMS + graphs);
    expect([...finalized.values()].every((n) => n === 1)).toBe(true);
    expect(Number((await app.rows(`SELECT COUNT(DISTINCT worker) AS n FROM executions`))[0].n)).toBe(2);
    // Nothing left to re-drive.
    expect(await app.queue.retryMany({ type: 'chaos' })).toEqual({ count: 0 });
  }, 900_000);

  it('cancelMany cancels what the filter selects (cascades included) and nothing else; retryMany brings it back', async () => {
    const a = await app.queue.enqueueGraph(
      Array.from({ length: 250 }, (_, i) => ({ ref: `a${i}`, type: 'noop', group: 'acme', args: { tenant: 'acme' } })),
    );
    const chain = await app.queue.enqueueGraph([
      { ref: 'up', type: 'noop', group: 'acme' },
      { ref: 'down', type: 'noop', group: 'other', dependsOn: ['up'] },
    ]);
    await app.queue.enqueueGraph(Array.from({ length: 50 }, (_, i) => ({ ref: `b${i}`, type: 'noop', group: 'globex' })));
    await app.db.run(sql`UPDATE jobs SET state = 'done' WHERE id = ${a.a0}`);

    expect(await app.queue.cancelMany({ group: 'acme', state: ['done'] })).toEqual({ count: 0 });
    expect(await app.queue.cancelMany({ group: 'acme' })).toEqual({ count: 250 }); // 249 + up; a0 is done
    expect(await app.count(`state = 'cancelled'`)).toBe(251); // and `down`, by cascade
    expect((await app.queue.get(chain.down))!.state).toBe('cancelled');
    expect(await app.count(`group_key = 'globex' AND state = 'ready'`)).toBe(50);

    expect(await app.queue.retryMany({ group: 'acme', argsContains: { tenant: 'acme' } })).toEqual({ count: 249 });
    expect(await app.queue.retryMany({ group: 'acme' })).toEqual({ count: 1 }); // up; down re-opens with it
    expect((await app.queue.get(chain.down))!.state).toBe('waiting');
    expect(await app.count(`state = 'cancelled'`)).toBe(0);
  });

  it('cancelMany of 3,000 jobs without dependents runs a handful of statements per batch, not one per job', async () => {
    for (let i = 0; i < 3_000; i += 1_000) {
      await app.queue.enqueueGraph(Array.from({ length: 1_000 }, (_, k) => ({ ref: `j${k}`, type: 'noop', group: 'flat' })));
    }
    const chain = await app.queue.enqueueGraph([
      { ref: 'up', type: 'noop', group: 'flat' },
      { ref: 'down', type: 'noop', group: 'other', dependsOn: ['up'] },
    ]);
    // Count the statements of every transaction cancelMany opens.
    let statements = 0;
    const transaction = app.db.transaction.bind(app.db);
    const spy = jest.spyOn(app.db, 'transaction').mockImplementation(((work: (tx: SqlExecutor) => Promise<unknown>, options?: never) =>
      transaction((tx) => work({ dialect: tx.dialect, run: (s) => (statements++, tx.run(s)) }), options)) as never);
    try {
      expect(await app.queue.cancelMany({ group: 'flat' })).toEqual({ count: 3_001 });
    } finally {
      spy.mockRestore();
    }
    // The cascade cancelled each job's dependents with a statement per job: 3,000 and more.
    expect(statements).toBeLessThan(100);
    expect(await app.count(`state = 'cancelled'`)).toBe(3_002);
    expect((await app.queue.get(chain.down))!.lastError).toBe(`cancelled: upstream job ${chain.up} failed or was cancelled`);
  });

  it('cancelMany of fan-in upstreams cancels each dependent once: a statement per dependent, not one per upstream', async () => {
    // 100 graphs: 10 upstreams (cancelled by the filter) → 1 dependent (cancelled by the cascade).
    const graphs = 100;
    const nodes = [];
    for (let k = 0; k < graphs; k++) {
      const ups = Array.from({ length: FAN_IN }, (_, i) => ({ ref: `u${k}-${i}`, type: 'noop', group: 'fan' }));
      nodes.push(...ups, { ref: `d${k}`, type: 'noop', group: 'other', dependsOn: ups.map((u) => u.ref) });
    }
    const ids = await app.queue.enqueueGraph(nodes);
    let statements = 0;
    const transaction = app.db.transaction.bind(app.db);
    const spy = jest.spyOn(app.db, 'transaction').mockImplementation(((work: (tx: SqlExecutor) => Promise<unknown>, options?: never) =>
      transaction((tx) => work({ dialect: tx.dialect, run: (s) => (statements++, tx.run(s)) }), options)) as never);
    try {
      expect(await app.queue.cancelMany({ group: 'fan' })).toEqual({ count: graphs * FAN_IN });
    } finally {
      spy.mockRestore();
    }
    expect(await app.count(`state = 'cancelled'`)).toBe(graphs * (FAN_IN + 1));
    // Each dependent names the first of its upstreams (the lowest id): the cascade's first cause that reaches it.
    for (const k of [0, 37, graphs - 1]) {
      expect((await app.queue.get(ids[`d${k}`]))!.lastError).toBe(`cancelled: upstream job ${ids[`u${k}-0`]} failed or was cancelled`);
    }
    // Every upstream ran its own cancel statement: 1,000 and more. Now one per dependent (two on
    // MySQL: a locking read, then the UPDATE), and a few per batch of 500.
    expect(statements).toBeLessThan(2 * graphs + 60);
  });

  it('an argsContains key named __proto__ is a key like any other: find and cancelMany select only the jobs holding it', async () => {
    // JSON.parse (the dashboard's args field, a request body) makes "__proto__" an own key; assigned
    // into a copy it set the prototype instead, the filter became {} and selected every job.
    const filter = JSON.parse('{"__proto__":{"tenant":"nobody"}}') as Record<string, unknown>;
    const others = await app.queue.enqueueGraph(Array.from({ length: 20 }, (_, i) => ({ ref: `o${i}`, type: 'noop', args: { tenant: 'acme' } })));
    const holder = await app.queue.enqueue({ type: 'noop', args: JSON.parse('{"__proto__":{"tenant":"nobody"},"n":1}') });
    expect(Object.keys((await app.queue.get(holder.id))!.args as object)).toContain('__proto__');

    expect((await app.queue.find({ argsContains: filter })).jobs.map((j) => j.id)).toEqual([holder.id]);
    expect((await app.queue.find({ argsContains: JSON.parse('{"__proto__":"x"}') })).jobs).toEqual([]);
    expect(await app.queue.cancelMany({ argsContains: filter })).toEqual({ count: 1 });
    expect(await app.count(`state = 'cancelled'`)).toBe(1);
    expect(await app.count(`state = 'ready'`)).toBe(Object.keys(others).length);
  });

  it('bad filters throw InvalidQueryError and change nothing', async () => {
    await app.queue.enqueue({ type: 'noop' });
    // {} and undefined would select every job; argsContains {} is contained in every args.
    for (const filter of [{ colour: 'red' }, { state: 'finished' }, { argsContains: 'x' }, { type: [] }, {}, undefined, { argsContains: {} }]) {
      await expect(app.queue.cancelMany(filter as never)).rejects.toBeInstanceOf(InvalidQueryError);
      await expect(app.queue.retryMany(filter as never)).rejects.toBeInstanceOf(InvalidQueryError);
    }
    expect(await app.count(`state = 'ready'`)).toBe(1);
  });
});
