import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';
import { WorkerProcess } from '../support/worker-process';

/** Jobs per phase, each in a group never seen before. */
const GROUPS = 6_000;
const MB = 1024 * 1024;

/**
 * Tenants come and go: a worker that has run jobs of many groups must not keep anything per
 * group. Measured by hand at 200,000 groups (flat within 1 MB on every dialect); here two phases
 * of GROUPS new groups each, so that something kept per group shows as a difference between them.
 */
describeDialects(`memory: a worker through ${(2 * GROUPS).toLocaleString('en')} groups, each seen once`, (db) => {
  let app: QueueApp;
  let worker: WorkerProcess | undefined;
  afterAll(async () => {
    worker?.kill();
    await app?.close();
  });

  it('keeps no per-group state: heap after GC flat between two phases of new groups', async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['tenant'] });
    worker = new WorkerProcess(
      'tenants.worker',
      {
        ...db.options(),
        concurrency: 20,
        limits: { global: 1_000, groups: { 'g-1': 2 }, types: { tenant: 500 } },
        rateLimits: { groups: { 'g-2': { limit: 100, intervalMs: 1_000 } } },
        groupWeights: { 'g-1': 3 },
      },
      {},
      ['--expose-gc'],
    );
    await worker.waitFor('ready');
    let seq = 0;
    const phase = async (tag: string, jobs: number, groupOf: (k: number) => string) => {
      for (let off = 0; off < jobs; off += 1_000) {
        await app.queue.enqueueGraph(
          Array.from({ length: Math.min(1_000, jobs - off) }, (_, i) => {
            const k = seq++;
            return { ref: `r${i}`, type: 'tenant', group: groupOf(k), key: `k-${k}` };
          }),
        );
      }
      await eventually(`${tag}: every job finished`, async () => (await app.count(`state NOT IN ('done', 'failed', 'cancelled')`)) === 0, 120_000, 100);
      worker!.send(`measure ${tag}`);
      return (await worker!.waitFor(`memory-${tag}`)) as unknown as { heap: number; handled: number; heard: number };
    };
    // The first phase warms every path up (claims, rotation, statements, metrics' types) in a few groups.
    const warm = await phase('warm', 2_000, (k) => `w-${k % 20}`);
    const first = await phase('first', GROUPS, (k) => `g-${k}`);
    const second = await phase('second', GROUPS, (k) => `g-${k}`);
    const mb = (n: number) => `${(n / MB).toFixed(1)} MB`;
    process.stdout.write(
      `[${db.dialect}] ${2 * GROUPS} groups: heap after GC ${mb(warm.heap)} → ${mb(first.heap)} → ${mb(second.heap)}; ` +
        `${second.handled} jobs, ${second.heard} events\n`,
    );
    expect(second.handled).toBe(2_000 + 2 * GROUPS);
    // 200 bytes per group would be 1.2 MB a phase; noise between two GCs here is under 1 MB.
    // (The opt-in metrics group label, for one, costs 2-5 KB per group: 12-28 MB.)
    expect(second.heap - first.heap).toBeLessThan(200 * GROUPS + MB);
  }, 300_000); // about 20 s per dialect alone; the whole suite's load may triple it
});
