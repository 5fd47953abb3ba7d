import type { GraphNode } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { installProbes } from '../support/probe-tables';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { WorkerProcess } from '../support/worker-process';

describeDialects('cluster-wide limits across 3 worker processes', (db) => {
  let app: QueueApp;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['counted'] });
    await installProbes(app);
  });
  afterAll(async () => {
    workers.forEach((w) => w.kill());
    await app?.close();
  });

  it('never runs more than the global cap (2), nor more than the group cap (1) of the hot group', async () => {
    for (const name of ['global', 'group:hot', 'group:cold']) await app.rows(`INSERT INTO cap_probe (name) VALUES ('${name}')`);
    const nodes: GraphNode[] = Array.from({ length: 36 }, (_, i) => ({
      ref: `j${i}`,
      type: 'counted',
      group: i % 2 ? 'hot' : 'cold',
      args: { ms: 60 },
    }));
    const ids = Object.values(await app.queue.enqueueGraph(nodes));
    const limits = { global: 2, groups: { hot: 1 } };
    for (let i = 0; i < 3; i++) {
      // One slot each: reaching the global cap of 2 takes two processes at once, and three
      // processes could run 3, so the cap is what stops them, between processes.
      workers.push(new WorkerProcess('engine.worker', { ...db.options(), concurrency: 1, pollIntervalMs: 20, limits }));
    }
    await Promise.all(workers.map((w) => w.waitFor('ready')));
    for (const id of ids) await app.queue.waitFor(id, { timeoutMs: 60_000 });

    const probes = Object.fromEntries((await app.rows(`SELECT name, max_seen, current FROM cap_probe`)).map((r) => [r.name, Number(r.max_seen)]));
    process.stdout.write(`[${db.dialect}] limits: max running seen global=${probes.global} hot=${probes['group:hot']} cold=${probes['group:cold']}\n`);
    expect(probes.global).toBe(2); // reached, never exceeded
    expect(probes['group:hot']).toBe(1);
    expect(await app.count(`state = 'done'`)).toBe(36);
    const owners = await app.rows(`SELECT DISTINCT worker FROM executions`);
    expect(owners.length).toBeGreaterThanOrEqual(2);
  });
});
