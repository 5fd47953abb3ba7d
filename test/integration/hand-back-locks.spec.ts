import { Injectable } from '@nestjs/common';
import type { QueryRunner } from 'typeorm';
import { JobHandler, type JobContext } from '../../lib';
import { sql } from '../../lib/database/sql';
import { handBackLeases } from '../../lib/lease/hand-back.sql';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

@Injectable()
class Patient {
  /** Runs until aborted (the shutdown's grace ends). */
  @JobHandler('patient')
  async run(_args: unknown, ctx: JobContext): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 30_000);
      ctx.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()));
    });
  }

  @JobHandler('quick')
  async quick(): Promise<void> {}
}

/**
 * Handing leases back (shutdown, stale prefetch, a pause) beside a row lock another transaction
 * holds on one of those jobs: an operator's session, a cancel, this worker's finalize or
 * renewal. The hand-back waited for such a lock, locking its other rows meanwhile in whatever
 * order PostgreSQL's plan visited them: it deadlocked with a transaction taking the same rows in
 * another order, and a shutdown waited out its whole deadline. It now skips locked rows (they
 * expire and are reclaimed, or are tried again at the next heartbeat). SQLite has one writer at
 * a time and no row locks.
 */
describeDialects(
  'hand-back beside row locks held by other transactions',
  (db) => {
    let app: QueueApp;

    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['t', 'patient', 'quick'] });
    });
    afterAll(async () => {
      await app?.close();
    });
    beforeEach(async () => {
      await resetTables(app);
    });

    /** n jobs leased by worker w1, as a claim leaves them. */
    async function leased(n: number): Promise<number[]> {
      const ids = Object.values(await app.queue.enqueueGraph(Array.from({ length: n }, (_, i) => ({ ref: `j${i}`, type: 't' }))));
      const d = app.db.dialect;
      await app.db.run(sql`UPDATE jobs SET state = 'running', lease_owner = 'w1', attempts = 1,
        lease_expires = ${d.addMs(d.now(), 60_000)} WHERE id IN (${sql.list(ids)})`);
      return ids.sort((a, b) => a - b);
    }

    /** Another session's transaction, locking rows when told; its statements give up after 5 s. */
    async function holder(): Promise<{ lock(id: number): Promise<void>; end(): Promise<void> }> {
      const runner: QueryRunner = app.dataSource.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      await runner.query(db.dialect === 'postgres' ? `SET LOCAL lock_timeout = '5s'` : `SET SESSION innodb_lock_wait_timeout = 5`);
      return {
        lock: async (id) => void (await runner.query(`SELECT id FROM jobs WHERE id = ${id} FOR UPDATE`)),
        end: async () => {
          await runner.commitTransaction().catch(() => undefined);
          await runner.release();
        },
      };
    }

    function within<T>(ms: number, work: Promise<T>): Promise<T> {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms)));
      return Promise.race([work, late]).finally(() => clearTimeout(timer));
    }

    it('hands back every other row at once, reports the locked one, and hands it back once free', async () => {
      const ids = await leased(6);
      const locked = ids[2];
      const session = await holder();
      try {
        await session.lock(locked);
        const started = Date.now();
        expect(await within(2_000, handBackLeases(app.db, 'w1', ids))).toEqual({ handedBack: 5, held: [locked] });
        expect(Date.now() - started).toBeLessThan(1_000);
      } finally {
        await session.end();
      }
      expect(await app.count(`state = 'ready' AND lease_owner IS NULL AND attempts = 0`)).toBe(5);
      expect(await app.count(`id = ${locked} AND state = 'running' AND lease_owner = 'w1'`)).toBe(1);
      expect(await handBackLeases(app.db, 'w1', [locked])).toEqual({ handedBack: 1, held: [] });
      expect(await app.count(`state = 'ready'`)).toBe(6);
    });

    it('never deadlocks with a transaction that takes the same rows in another order (20 rounds)', async () => {
      for (let round = 0; round < 20; round++) {
        await resetTables(app);
        const ids = await leased(6);
        const [lowest, highest] = [ids[0], ids[ids.length - 1]];
        const session = await holder();
        try {
          // The other transaction holds the highest id first and then asks for the lowest (a
          // finalize locking its completions, then its failures, is not one id order).
          await session.lock(highest);
          const handing = handBackLeases(app.db, 'w1', ids);
          await new Promise((r) => setTimeout(r, 30));
          const started = Date.now();
          await within(2_000, session.lock(lowest));
          expect(Date.now() - started).toBeLessThan(500);
          // Whether the hand-back reached the lowest row before the other transaction did (a
          // loaded machine: not always), neither waited for the other.
          const { handedBack, held } = await within(2_000, handing);
          expect(held).toContain(highest);
          expect(held.every((id) => id === lowest || id === highest)).toBe(true);
          expect(handedBack + held.length).toBe(ids.length);
        } finally {
          await session.end();
        }
      }
    }, 60_000);

    it('a worker shuts down without waiting for a locked row and hands back the rest', async () => {
      const worker = await startQueueApp(db, { concurrency: 3, prefetch: 0, pollIntervalMs: 20, shutdownGraceMs: 200, listenNotify: false }, [Patient]);
      let closing: Promise<void> | undefined;
      const session = await holder();
      try {
        const ids = Object.values(await app.queue.enqueueGraph([0, 1, 2].map((i) => ({ ref: `p${i}`, type: 'patient' })))).sort((a, b) => a - b);
        await eventually('all three running', async () => (await app.count(`state = 'running'`)) === 3);
        await session.lock(ids[1]);
        const started = Date.now();
        closing = worker.close();
        await within(4_000, closing);
        // Grace (200 ms) and a little: not the database deadline (2 s more) spent waiting for the lock.
        expect(Date.now() - started).toBeLessThan(1_500);
        expect(await app.count(`state = 'ready' AND lease_owner IS NULL AND attempts = 0`)).toBe(2);
        expect(await app.count(`id = ${ids[1]} AND state = 'running'`)).toBe(1); // its lease expires and it is reclaimed
      } finally {
        await session.end();
        await closing?.catch(() => undefined);
      }
    }, 30_000);

    it('a live worker hands back a row it found locked once the lock is gone, not leaving it leased for good', async () => {
      // One slot, held by a patient job; quick jobs wait in the prefetch buffer until a pause
      // (or their staleness) sends them back. The renewal keeps the locked one's lease meanwhile:
      // forgotten, it would stay leased by a live worker for as long as that worker lives.
      const worker = await startQueueApp(db, { concurrency: 1, prefetch: 4, pollIntervalMs: 20, heartbeatIntervalMs: 100, shutdownGraceMs: 200, listenNotify: false }, [Patient]);
      const session = await holder();
      let released = false;
      try {
        await app.queue.enqueue({ type: 'patient', priority: 10 });
        const quick = Object.values(await app.queue.enqueueGraph([0, 1, 2, 3].map((i) => ({ ref: `q${i}`, type: 'quick' })))).sort((a, b) => a - b);
        await eventually('the quick jobs prefetched', async () => (await app.count(`type = 'quick' AND state = 'running'`)) === 4);
        const locked = quick[1];
        await session.lock(locked);
        await app.queue.pause({ type: 'quick' });
        await eventually('the others handed back', async () => (await app.count(`type = 'quick' AND state = 'ready' AND lease_owner IS NULL`)) === 3, 5_000);
        await new Promise((r) => setTimeout(r, 500)); // several heartbeats while the lock lasts
        expect(await app.count(`id = ${locked} AND state = 'running'`)).toBe(1);
        await session.end();
        released = true;
        await eventually('the locked one handed back too', async () => (await app.count(`id = ${locked} AND state = 'ready' AND lease_owner IS NULL AND attempts = 0`)) === 1, 2_000);
      } finally {
        if (!released) await session.end();
        await app.queue.resume({ type: 'quick' });
        await worker.close();
      }
    }, 30_000);
  },
  ['postgres', 'mysql'],
);
