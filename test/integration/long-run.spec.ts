import { claimCandidatesStatement } from '../../lib/claim/claim-candidates.sql';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';
import { WorkerProcess, type WorkerMessage } from '../support/worker-process';

/** `npm test` runs 20,000 jobs per dialect; `npm run test:chaos` the 100,000-job variant. */
const JOBS = Number(process.env.LONG_RUN_JOBS ?? 20_000);
const MB = 1024 * 1024;

describeDialects(`long run: ${JOBS.toLocaleString('en')} jobs through one worker`, (db) => {
  let app: QueueApp;
  let worker: WorkerProcess | undefined;
  afterAll(async () => {
    worker?.kill();
    await app?.close();
  });

  it('keeps RSS flat after warm-up and the pool size constant; retention then empties the table', async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['noop'], retention: false });
    for (let i = 0; i < JOBS; i += 5_000) {
      await app.queue.enqueueGraph(Array.from({ length: Math.min(5_000, JOBS - i) }, (_, k) => ({ ref: `n${i + k}`, type: 'noop' })));
    }
    worker = new WorkerProcess('engine.worker', {
      ...db.options(),
      concurrency: 10,
      reportMemoryMs: 250,
      // Short retention: finished jobs go as soon as the sweep sees them.
      retention: { olderThanMs: 0, intervalMs: 1_000, batchSize: 2_000 },
    });
    await worker.waitFor('ready');
    const started = Date.now();
    await eventually('all jobs finished', async () => (await app.count(`state NOT IN ('done', 'failed', 'cancelled')`)) === 0, 600_000, 250);
    const elapsed = Date.now() - started;
    const samples = worker.messages.filter((m): m is WorkerMessage & { rss: number; pool: number } => m.type === 'memory');
    const rss = samples.map((s) => s.rss);
    const warm = rss.slice(Math.floor(rss.length * 0.25));
    const half = Math.floor(warm.length / 2);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const early = median(warm.slice(0, half));
    const late = median(warm.slice(half));
    const pools = new Set(samples.map((s) => s.pool));
    process.stdout.write(
      `[${db.dialect}] long run: ${JOBS} jobs in ${elapsed} ms (${Math.round((JOBS / elapsed) * 1000)} jobs/s); RSS start ${(rss[0] / MB).toFixed(0)} MB, ` +
        `after warm-up ${(early / MB).toFixed(0)} → ${(late / MB).toFixed(0)} MB (median of each half), peak ${(Math.max(...rss) / MB).toFixed(0)} MB; pool sizes seen ${[...pools].join(',')}\n`,
    );
    expect(samples.length).toBeGreaterThan(4);
    expect(late - early).toBeLessThan(Math.max(24 * MB, early * 0.15));
    expect(Math.max(...pools)).toBeLessThanOrEqual(10); // never beyond the configured pool

    // Retention shrinks the table back, and the claim still reads only the ready index.
    await eventually('retention emptied the table', async () => (await app.count()) === 0, 120_000, 500);
    await app.queue.enqueueGraph(Array.from({ length: 5 }, (_, i) => ({ ref: `after${i}`, type: 'noop' })));
    if (db.dialect === 'postgres') await app.rows(`ANALYZE jobs`);
    const { text, params } = claimCandidatesStatement(app.db.dialect, ['noop'], { limit: 10 }).render(db.dialect);
    const plan = JSON.stringify(await app.dataSource.query((db.dialect === 'sqlite' ? 'EXPLAIN QUERY PLAN ' : 'EXPLAIN ') + text, params));
    expect(plan).toMatch(/jobs_ready(_group)?_idx/); // either partial ready index; never a scan of the table
    expect(plan).not.toMatch(/Seq Scan|SCAN jobs\b(?! USING)/);
  });
});
