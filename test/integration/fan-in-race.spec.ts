import type { GraphNode } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { finalizeCounts, installProbes } from '../support/probe-tables';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { WorkerProcess } from '../support/worker-process';

/**
 * Upstreams of the same fan-in node finishing in concurrent transactions, in different
 * processes: if promotion were a read-then-write, both could see the other as unfinished
 * and the fan-in node would wait forever.
 */
describeDialects('fan-in promotion under concurrent finalizes (3 processes)', (db) => {
  let app: QueueApp;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['noop', 'chaos'] });
    await installProbes(app);
  });
  afterAll(async () => {
    workers.forEach((w) => w.kill());
    await app?.close();
  });

  it('promotes every fan-in node exactly when its last upstream finishes, and containers roll up once', async () => {
    const nodes: GraphNode[] = [];
    for (let f = 0; f < 150; f++) {
      nodes.push({ ref: `box${f}`, type: 'container' });
      for (let u = 0; u < 8; u++) nodes.push({ ref: `u${f}.${u}`, type: 'noop', parent: `box${f}` });
      nodes.push({ ref: `join${f}`, type: 'noop', dependsOn: Array.from({ length: 8 }, (_, u) => `u${f}.${u}`) });
      nodes.push({ ref: `after${f}`, type: 'noop', dependsOn: [`box${f}`, `join${f}`] });
    }
    // Workers first, all idle, so that all three take part from the first job.
    for (let i = 0; i < 3; i++) workers.push(new WorkerProcess('engine.worker', { ...db.options(), concurrency: 8, pollIntervalMs: 20 }));
    await Promise.all(workers.map((w) => w.waitFor('ready')));
    const started = Date.now();
    const ids = await app.queue.enqueueGraph(nodes);
    for (let f = 0; f < 150; f++) await app.queue.waitFor(ids[`after${f}`], { timeoutMs: 60_000 });
    process.stdout.write(`[${db.dialect}] fan-in race: ${nodes.length} jobs through 3 processes in ${Date.now() - started} ms\n`);

    expect(await app.count(`state <> 'done'`)).toBe(0);
    const counts = await finalizeCounts(app);
    expect(counts.size).toBe(nodes.length);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    // The finalizes really came from several processes (containers roll up with no owner).
    const spread = await app.rows(`SELECT COUNT(DISTINCT worker) AS n FROM finalize_audit WHERE worker IS NOT NULL`);
    expect(Number(spread[0].n)).toBeGreaterThanOrEqual(2);
  });

  it('counts a fan-in down once per upstream when half of them fail along edges that allow it', async () => {
    const before = await finalizeCounts(app);
    const nodes: GraphNode[] = [];
    for (let f = 0; f < 150; f++) {
      // Even upstreams succeed, odd ones fail for good: both finalize paths race on the join's row.
      for (let u = 0; u < 8; u++) nodes.push({ ref: `u${f}.${u}`, type: 'chaos', args: { ms: 0, ...(u % 2 ? { fail: 'always' } : {}) } });
      nodes.push({ ref: `join${f}`, type: 'noop', dependsOn: Array.from({ length: 8 }, (_, u) => ({ job: `u${f}.${u}`, allowFailure: true })) });
      nodes.push({ ref: `after${f}`, type: 'noop', dependsOn: [`join${f}`] });
    }
    const ids = await app.queue.enqueueGraph(nodes);
    for (let f = 0; f < 150; f++) expect(await app.queue.waitFor(ids[`after${f}`], { timeoutMs: 60_000 })).toMatchObject({ state: 'done' });
    const mine = Object.values(ids);
    const states = await app.rows(`SELECT state, COUNT(*) AS n FROM jobs WHERE id >= ${Math.min(...mine)} GROUP BY state ORDER BY state`);
    expect(states.map((r) => [r.state, Number(r.n)])).toEqual([['done', 150 * 6], ['failed', 150 * 4]]);
    const counts = await finalizeCounts(app);
    for (const id of mine) expect([id, counts.get(id)]).toEqual([id, 1]);
    expect(counts.size).toBe(before.size + nodes.length);
  });
});
