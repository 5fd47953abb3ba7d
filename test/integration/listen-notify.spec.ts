import { Injectable } from '@nestjs/common';
import { JobHandler } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp } from '../support/queue-app';
import { WorkerProcess } from '../support/worker-process';

@Injectable()
class OneShot {
  @JobHandler('one-shot')
  async run(): Promise<string> {
    return 'ok';
  }
}

describeDialects(
  'LISTEN/NOTIFY wake-up',
  (db) => {
    it('a pool of one connection: no LISTEN (it would hold the only connection); jobs and waiters run by polling', async () => {
      // Before, the LISTEN connection took the pool's only one and everything else waited for it:
      // the job was never claimed and waitFor timed out.
      const app = await startQueueApp(db, { poolSize: 1, pollIntervalMs: 50 }, [OneShot]);
      try {
        const job = await app.queue.enqueue({ type: 'one-shot' });
        expect((await app.queue.waitFor(job.id, { timeoutMs: 10_000 })).state).toBe('done');
        expect((await app.rows(`SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`))[0].n).toBe('0');
      } finally {
        await app.close();
      }
    }, 30_000);

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

@Injectable()
class UpstreamHandlers {
  @JobHandler('up')
  async up(): Promise<null> {
    return null;
  }
}

@Injectable()
class DownstreamHandlers {
  @JobHandler('down')
  async down(): Promise<null> {
    return null;
  }
}

/**
 * A complete that ends with its worker's claim sends its ready wake as `r:<worker id>`, which
 * that worker ignores (lib/notify/notify.sql.ts). Another worker must still hear it: here the
 * promoted job is of a type only the other worker runs, so the claiming worker takes nothing.
 */
describeDialects(
  'LISTEN/NOTIFY wake-up after a complete that claimed',
  (db) => {
    it('wakes an idle worker of another type (poll 5 s) for the dependent a complete promoted', async () => {
      const upstream = await startQueueApp(db, { pollIntervalMs: 5_000, concurrency: 4, externalTypes: ['down'] }, [UpstreamHandlers]);
      const downstream = await startQueueApp(db, { pollIntervalMs: 5_000, concurrency: 4 }, [DownstreamHandlers]);
      try {
        await new Promise((r) => setTimeout(r, 300)); // idle: the first polls have come and gone
        const gaps: number[] = [];
        for (let i = 0; i < 10; i++) {
          const ids = await upstream.queue.enqueueGraph([
            { ref: 'up', type: 'up' },
            { ref: 'down', type: 'down', dependsOn: ['up'] },
          ]);
          const down = await downstream.queue.waitFor(ids.down, { timeoutMs: 4_000 });
          const up = await upstream.queue.get(ids.up);
          // Both from the database clock: the upstream's finalize commit → the dependent's claim.
          gaps.push(down.startedAt!.getTime() - up!.finishedAt!.getTime());
        }
        gaps.sort((a, b) => a - b);
        process.stdout.write(`[${db.dialect}] promotion → other worker's start: median ${gaps[5]} ms, max ${gaps[9]} ms (poll 5000 ms)\n`);
        expect(gaps[9]).toBeLessThan(500);
      } finally {
        await downstream.close();
        await upstream.close();
      }
    });
  },
  ['postgres'],
);
