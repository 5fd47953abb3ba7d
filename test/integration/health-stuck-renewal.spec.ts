import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { JobHandler, JobQueueModule, JobQueueService, type JobContext } from '../../lib';
import { JobQueueHealthIndicator, JobQueueHealthModule } from 'nestjs-sql-job-queue/health';
import { describeDialects } from '../support/describe-dialects';
import { eventually } from '../support/wait';

const LEASE_MS = 1_000;

@Injectable()
class Long {
  static started = 0;
  @JobHandler('long')
  async run(_args: unknown, ctx: JobContext): Promise<void> {
    Long.started++;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 60_000);
      ctx.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()));
    });
  }
}

/**
 * Another session holds the jobs table locked (an `ALTER TABLE` queued behind a long
 * transaction, an operator's `LOCK TABLE`): this worker's lease renewal waits for the lock and
 * neither succeeds nor fails, while its leases expire and other workers may reclaim its running
 * jobs. The health check's own read waits too, its ping answers, so it said `up` for as long as
 * the lock lasted. A renewal waiting longer than a lease TTL is now `down`, like one failing that
 * long. (SQLite: a locked database fails the renewal with SQLITE_BUSY, already `down`.)
 */
describeDialects(
  'health while the lease renewal waits on a table lock longer than a lease',
  (db) => {
    let moduleRef: TestingModule;

    beforeAll(async () => {
      moduleRef = await Test.createTestingModule({
        imports: [
          TerminusModule,
          JobQueueModule.forRoot(db.options({ leaseTtlMs: LEASE_MS, heartbeatIntervalMs: 200, pollIntervalMs: 50, shutdownGraceMs: 200 })),
          JobQueueHealthModule,
        ],
        providers: [Long],
      }).compile();
      await moduleRef.init();
    });
    afterAll(() => moduleRef?.close());

    /** Runs `work` while another session holds the jobs table locked; the lock ends with it. */
    async function whileLocked(work: () => Promise<void>): Promise<void> {
      if (db.dialect === 'postgres') {
        const c = new pg.Client({ connectionString: db.location });
        await c.connect();
        try {
          await c.query('BEGIN');
          await c.query('LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE');
          await work();
        } finally {
          await c.query('ROLLBACK').catch(() => undefined);
          await c.end();
        }
        return;
      }
      const c = await mysql.createConnection(db.location);
      try {
        await c.query('LOCK TABLES jobs WRITE');
        await work();
      } finally {
        await c.query('UNLOCK TABLES').catch(() => undefined);
        await c.end();
      }
    }

    it('says down once the renewal has waited longer than a lease TTL, and up again after', async () => {
      const queue = moduleRef.get(JobQueueService);
      const health = moduleRef.get(JobQueueHealthIndicator);
      // The count goes on from the dialect before: waiting for 1 on MySQL saw PostgreSQL's run,
      // locked the table before this job was claimed, and found a claim waiting, no renewal.
      const startedBefore = Long.started;
      await queue.enqueue({ type: 'long' });
      await eventually('the job running', async () => Long.started === startedBefore + 1);
      // It holds a lease when the lock begins: the renewal has one to wait for.
      expect((await health.isHealthy('q', { timeoutMs: 500 })).q).toMatchObject({ status: 'up', inFlight: 1 });

      await whileLocked(async () => {
        await new Promise((r) => setTimeout(r, LEASE_MS * 2)); // its lease has expired meanwhile
        const check = (await health.isHealthy('q', { timeoutMs: 500 })).q;
        // Before: { status: 'up' } (the read waited for the lock, the ping answered).
        expect(check).toMatchObject({ status: 'down', message: expect.stringMatching(/^lease renewal has waited \d+ ms for the database \(lease TTL 1000 ms\)$/) });
      });
      await eventually('health up again', async () => (await health.isHealthy('q', { timeoutMs: 500 })).q.status === 'up', 10_000, 50);
    }, 30_000);
  },
  ['postgres', 'mysql'],
);
