import { describeDialects } from '../support/describe-dialects';
import { clearProbes, installProbes } from '../support/probe-tables';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';
import { WorkerProcess } from '../support/worker-process';

/**
 * A live worker keeps its leases while another transaction holds the row lock of one of its
 * jobs (its own finalize, a cascade, an operator's session) for longer than the lease lasts.
 * With 8 worker processes on PostgreSQL the renewal waited for such a lock, every lease it had
 * not reached yet expired meanwhile, and the reclaim sweep handed those running jobs to other
 * workers: attempts of live workers ran twice. SQLite has one writer at a time: not applicable.
 */
describeDialects(
  'lease renewal beside a row lock held by another transaction',
  (db) => {
    const JOBS = 10;
    const LEASE_MS = 1_000;
    const HOLD_MS = 3 * LEASE_MS;
    let app: QueueApp;
    let worker: WorkerProcess | undefined;

    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['slow'] });
      await installProbes(app);
    });
    afterAll(async () => {
      worker?.kill();
      await app?.close();
    });
    beforeEach(async () => {
      await resetTables(app);
      await clearProbes(app);
    });

    it('renews every other lease and re-runs none of those jobs', async () => {
      worker = new WorkerProcess('engine.worker', {
        ...db.options(),
        concurrency: JOBS,
        prefetch: 0,
        leaseTtlMs: LEASE_MS,
        heartbeatIntervalMs: 200,
        reclaimIntervalMs: 100,
        pollIntervalMs: 50,
      });
      await worker.waitFor('ready');
      const ids: number[] = [];
      for (let i = 0; i < JOBS; i++) ids.push((await app.queue.enqueue({ type: 'slow', args: { ms: HOLD_MS + 2 * LEASE_MS } })).id);
      await eventually('every job inside its handler', async () => (await app.count(`state = 'running'`)) === JOBS && (await app.rows(`SELECT job_id FROM executions`)).length === JOBS);

      // The lowest id: the first row a renewal in id order reaches.
      const locked = Math.min(...ids);
      const runner = app.dataSource.createQueryRunner();
      await runner.connect();
      try {
        await runner.startTransaction();
        await runner.query(`SELECT id FROM jobs WHERE id = ${locked} FOR UPDATE`);
        await new Promise((r) => setTimeout(r, HOLD_MS));
        await runner.commitTransaction();
      } finally {
        await runner.release();
      }

      for (const id of ids) await app.queue.waitFor(id, { timeoutMs: 30_000 }).catch(() => undefined);
      const executions = await app.rows(`SELECT job_id, attempt FROM executions ORDER BY job_id, attempt`);
      const others = executions.filter((e) => Number(e.job_id) !== locked).map((e) => `${e.job_id}/${e.attempt}`);
      // Each of the other jobs ran once, on attempt 1: no lease of theirs expired.
      expect(others).toEqual(ids.filter((id) => id !== locked).sort((a, b) => a - b).map((id) => `${id}/1`));
      expect(await app.count(`state = 'done' AND id <> ${locked} AND attempts = 1`)).toBe(JOBS - 1);
      // The locked job's lease could not be renewed while the lock lasted; it ends done all the same.
      expect(await app.count(`state = 'done' AND id = ${locked}`)).toBe(1);
      expect(await app.count(`lease_owner IS NOT NULL`)).toBe(0);
    }, 60_000);
  },
  ['postgres', 'mysql'],
);
