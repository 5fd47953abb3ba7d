import { describeDialects } from '../support/describe-dialects';
import { startQueueApp } from '../support/queue-app';
import { WorkerProcess } from '../support/worker-process';

describeDialects(
  'LISTEN/NOTIFY wake-up',
  (db) => {
    it('an idle worker with a 5 s poll interval starts a job enqueued by another process in well under a second', async () => {
      const app = await startQueueApp(db, { worker: false, externalTypes: ['noop'] });
      const worker = new WorkerProcess('engine.worker', { ...db.options(), pollIntervalMs: 5_000 });
      try {
        await worker.waitFor('ready');
        await new Promise((r) => setTimeout(r, 300)); // idle: the first poll has come and gone
        const latencies: number[] = [];
        for (let i = 0; i < 10; i++) {
          const job = await app.queue.enqueue({ type: 'noop' });
          const done = await app.queue.waitFor(job.id, { timeoutMs: 4_000 }).catch((err: Error) => {
            // What the worker logged says why it missed the wake-up (a lost LISTEN connection, a failed claim).
            // Nest's logger writes warnings to stdout, which arrive as 'log' messages.
            const logged = worker.messages.filter((m) => m.type === 'log').map((m) => String(m.line));
            throw new Error(`${err.message}\nworker stdout:\n${logged.slice(-30).join('\n')}\nworker stderr:\n${worker.stderr.slice(-30).join('\n')}`);
          });
          // Both times come from the database clock: enqueue commit → claim.
          latencies.push(done.startedAt!.getTime() - done.createdAt.getTime());
        }
        latencies.sort((a, b) => a - b);
        process.stdout.write(`[${db.dialect}] NOTIFY wake: enqueue → start median ${latencies[5]} ms, max ${latencies[9]} ms (poll 5000 ms)\n`);
        expect(latencies[9]).toBeLessThan(500);
      } finally {
        worker.kill();
        await app.close();
      }
    });
  },
  ['postgres'],
);
