import { Injectable } from '@nestjs/common';
import { Client } from 'pg';
import { JobHandler, OnJobEvent, type JobView } from '../../lib';
import { sql, type Sql } from '../../lib/database/sql';
import { failInOneStatementPostgres } from '../../lib/finalize/fail.sql';
import { SETTLED_CHANNEL } from '../../lib/notify/notify.sql';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, resetTables, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

const JOBS = 1_200;
const SLICE = 500; // the finalizer's batch

/**
 * PostgreSQL writes a batch of failed attempts in one call of `job_queue_fail` (migration 37)
 * instead of a transaction of five round trips and a separate notification (a batch of 500
 * failures: ~60 ms against a complete's 17 ms). A job failed for good that has dependents or a
 * container needs the cascade: the call then writes nothing and the batch takes the transaction.
 */
describeDialects(
  'failed attempts in one statement',
  (db) => {
    let app: QueueApp;
    let listener: Client;
    const told: number[] = [];
    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['f'] });
      listener = new Client({ connectionString: db.location });
      listener.on('error', () => undefined); // the database is dropped after the specs
      await listener.connect();
      listener.on('notification', (n) => {
        if (n.channel === SETTLED_CHANNEL) told.push(...String(n.payload).split(',').map(Number));
      });
      await listener.query(`LISTEN ${SETTLED_CHANNEL}`);
    });
    afterAll(async () => {
      await listener.end();
      await app.close();
    });
    beforeEach(async () => {
      await resetTables(app);
      told.length = 0;
    });

    const call = async (owner: string, items: Parameters<typeof failInOneStatementPostgres>[1]) =>
      (await app.db.run(failInOneStatementPostgres(owner, items, true))).rows.map((r) => [String(r.kind), r.job == null ? null : Number(r.job)] as const);
    const running = (where: Sql = sql`1 = 1`) => app.db.run(sql`UPDATE jobs SET state = 'running', lease_owner = 'me', attempts = 1, lease_expires = now() WHERE ${where}`);

    it(`${JOBS} failures: each job its own text, delay and outcome; other owners' jobs untouched; those failed for good announced`, async () => {
      const ids = Object.values(await app.queue.enqueueGraph(Array.from({ length: JOBS }, (_, i) => ({ ref: `j${i}`, type: 'f', maxAttempts: 3 }))));
      await running();
      await app.db.run(sql`UPDATE jobs SET attempts = 3 WHERE id % 3 = 0`);
      await app.db.run(sql`UPDATE jobs SET lease_owner = 'other' WHERE id % 10 = 0`);
      const items = ids.map((id) => ({ id, error: `it's job ${id}'s error -- ${'x'.repeat(id % 7)}`, retryDelayMs: id % 2 ? 3_600_000 : 0, final: id % 5 === 0 }));

      const rows = [];
      for (let i = 0; i < items.length; i += SLICE) rows.push(...(await call('me', items.slice(i, i + SLICE))));

      const mine = ids.filter((id) => id % 10 !== 0);
      const retried = mine.filter((id) => id % 3 !== 0 && id % 5 !== 0);
      const failed = mine.filter((id) => !retried.includes(id));
      expect(rows.filter(([k]) => k === 'retried').map(([, id]) => id)).toEqual(retried);
      expect(rows.filter(([k]) => k === 'failed').map(([, id]) => id)).toEqual(failed);
      expect(rows.length).toBe(mine.length);
      const stored = await app.rows(`SELECT id, state, last_error, lease_owner, lease_expires, finished_at IS NOT NULL AS finished, run_after > now() + interval '30 minutes' AS later FROM jobs ORDER BY id`);
      for (const r of stored) {
        const id = Number(r.id);
        if (id % 10 === 0) {
          expect([id, r.state, r.last_error, r.lease_owner]).toEqual([id, 'running', null, 'other']);
          continue;
        }
        const state = retried.includes(id) ? 'ready' : 'failed';
        expect([id, r.state, r.last_error, r.lease_owner, r.lease_expires, r.finished]).toEqual([id, state, items.find((i) => i.id === id)!.error, null, null, state === 'failed']);
        if (state === 'ready') expect([id, r.later]).toEqual([id, id % 2 === 1]);
      }
      await eventually('the settled notifications', async () => told.length >= failed.length, 10_000);
      expect([...told].sort((a, b) => a - b)).toEqual(failed);
    });

    it('a job failed for good with a dependent: the call writes nothing and says so', async () => {
      const out = await app.queue.enqueueGraph([
        { ref: 'a', type: 'f', maxAttempts: 1 },
        { ref: 'b', type: 'f', maxAttempts: 1 },
        { ref: 'c', type: 'f', dependsOn: ['b'] },
      ]);
      await running(sql`id IN (${sql.list([out.a, out.b])})`);
      const rows = await call('me', [
        { id: out.a, error: 'a broke', retryDelayMs: 0 },
        { id: out.b, error: 'b broke', retryDelayMs: 0 },
      ]);
      expect(rows).toEqual([['cascade', null]]);
      const stored = await app.rows(`SELECT id, state, last_error, lease_owner FROM jobs ORDER BY id`);
      expect(stored.map((r) => [Number(r.id), r.state, r.last_error, r.lease_owner])).toEqual([
        [out.a, 'running', null, 'me'],
        [out.b, 'running', null, 'me'],
        [out.c, 'waiting', null, null],
      ]);
      expect(told).toEqual([]);
    });

    it('a contained job: written when it is retried, the cascade when it fails for good', async () => {
      const out = await app.queue.enqueueGraph([
        { ref: 'box', type: 'f' },
        { ref: 'x', type: 'f', parent: 'box', maxAttempts: 2 },
      ]);
      const child = out.x;
      await running(sql`id = ${child}`);
      expect(await call('me', [{ id: child, error: 'once', retryDelayMs: 0 }])).toEqual([['retried', child]]);
      await running(sql`id = ${child}`);
      await app.db.run(sql`UPDATE jobs SET attempts = 2 WHERE id = ${child}`);
      expect(await call('me', [{ id: child, error: 'twice', retryDelayMs: 0 }])).toEqual([['cascade', null]]);
      expect((await app.rows(`SELECT state, last_error FROM jobs WHERE id = ${child}`))[0]).toEqual({ state: 'running', last_error: 'once' });
    });

    it('a dependent added while the failure waits for its upstream row is seen: the call takes the cascade', async () => {
      const out = await app.queue.enqueueGraph([{ ref: 'up', type: 'f', maxAttempts: 1 }]);
      await running(sql`id = ${out.up}`);
      // An enqueue of a dependent holds its upstream FOR SHARE until it commits (lib/enqueue/job-insert.sql.ts).
      const enqueuer = new Client({ connectionString: db.location });
      await enqueuer.connect();
      try {
        await enqueuer.query('BEGIN');
        await enqueuer.query('SELECT id FROM jobs WHERE id = $1 FOR SHARE', [out.up]);
        const { rows } = await enqueuer.query(
          `INSERT INTO jobs (type, args, state, pending_deps, max_attempts) VALUES ('f', 'null', 'waiting', 1, 1) RETURNING id`,
        );
        await enqueuer.query('INSERT INTO job_deps (job_id, depends_on_id) VALUES ($1, $2)', [rows[0].id, out.up]);
        const failing = call('me', [{ id: out.up, error: 'up broke', retryDelayMs: 0 }]);
        // The call is blocked on the row lock: nothing settles until the enqueue commits.
        const early = await Promise.race([failing.then(() => 'answered'), new Promise((r) => setTimeout(() => r('waiting'), 300))]);
        expect(early).toBe('waiting');
        await enqueuer.query('COMMIT');
        expect(await failing).toEqual([['cascade', null]]);
      } finally {
        await enqueuer.end();
      }
      expect((await app.rows(`SELECT state FROM jobs WHERE id = ${out.up}`))[0].state).toBe('running');
    });
  },
  ['postgres'],
);

@Injectable()
class Failing {
  failedEvents: number[] = [];
  @JobHandler('boom', { maxAttempts: 1 })
  async boom(): Promise<never> {
    throw new Error('boom');
  }
  @JobHandler('after')
  async after(): Promise<null> {
    return null;
  }
  @OnJobEvent('failed')
  onFailed(job: JobView): void {
    this.failedEvents.push(job.id);
  }
}

describeDialects(
  'a worker failing jobs with and without dependents',
  (db) => {
    let app: QueueApp;
    afterEach(() => app?.close());

    it('2,000 failures in batches: every job failed once, every dependent cancelled, one failed event each', async () => {
      app = await startQueueApp(db, { concurrency: 10, prefetch: 500, pollIntervalMs: 200 }, [Failing]);
      await resetTables(app);
      const nodes: Array<{ ref: string; type: string; dependsOn?: string[] }> = [];
      for (let i = 0; i < 2_000; i++) nodes.push({ ref: `f${i}`, type: 'boom' });
      // Every 50th failure has a dependent, so some batches take the cascade and most do not.
      for (let i = 0; i < 2_000; i += 50) nodes.push({ ref: `d${i}`, type: 'after', dependsOn: [`f${i}`] });
      const calls = { fail: 0 };
      const run = app.db.run.bind(app.db);
      app.db.run = (s: Sql) => {
        if (s.render(db.dialect).text.includes('job_queue_fail(')) calls.fail++;
        return run(s);
      };
      await app.queue.enqueueGraph(nodes);
      await eventually('every job failed or cancelled', async () => (await app.count(`state IN ('failed', 'cancelled')`)) === 2_040, 60_000);
      expect(await app.count(`state = 'failed' AND type = 'boom' AND attempts = 1 AND last_error LIKE '%boom%'`)).toBe(2_000);
      expect(await app.count(`state = 'cancelled' AND type = 'after'`)).toBe(40);
      const events = app.module.get(Failing).failedEvents;
      await eventually('a failed event per job', async () => events.length >= 2_000, 10_000);
      expect(new Set(events).size).toBe(2_000);
      expect(events.length).toBe(2_000);
      // PostgreSQL's batches without a dependent were one call each; the others took the cascade.
      if (db.dialect === 'postgres') expect(calls.fail).toBeGreaterThan(0);
    });

    it(`one job in twenty failing: every job finalized once${db.dialect === 'postgres' ? '; completions and failures each in one statement, no finalize transaction' : ''}`, async () => {
      app = await startQueueApp(db, { concurrency: 10, prefetch: 500, pollIntervalMs: 200 }, [Failing]);
      await resetTables(app);
      const calls = { complete: 0, fail: 0, inTransaction: [] as string[] };
      const run = app.db.run.bind(app.db);
      app.db.run = (s: Sql) => {
        const text = s.render(db.dialect).text;
        if (text.includes('job_queue_fail(')) calls.fail++;
        if (text.includes('job_queue_complete')) calls.complete++;
        return run(s);
      };
      // The transactional path's complete and fail (lib/finalize/complete.sql.ts, fail.sql.ts).
      const transaction = app.db.transaction.bind(app.db);
      app.db.transaction = ((work, options) =>
        transaction(
          (tx) =>
            work({
              dialect: tx.dialect,
              run: (s) => {
                const text = s.render(db.dialect).text;
                if (/UPDATE jobs SET (result|state = CASE WHEN)/.test(text)) calls.inTransaction.push(text.slice(0, 60));
                return tx.run(s);
              },
            }),
          options,
        )) as typeof app.db.transaction;
      await app.queue.enqueueGraph(Array.from({ length: 4_000 }, (_, i) => ({ ref: `j${i}`, type: i % 20 === 0 ? 'boom' : 'after' })));
      await eventually('every job finished', async () => (await app.count(`state IN ('done', 'failed')`)) === 4_000, 60_000);
      expect(await app.count(`state = 'failed' AND type = 'boom'`)).toBe(200);
      expect(await app.count(`state = 'done' AND type = 'after'`)).toBe(3_800);
      const events = app.module.get(Failing).failedEvents;
      await eventually('a failed event per failed job', async () => events.length >= 200, 10_000);
      expect(new Set(events).size).toBe(200);
      if (db.dialect !== 'postgres') return; // MySQL and SQLite write every batch in a transaction
      expect(calls.inTransaction).toEqual([]);
      expect(calls.fail).toBeGreaterThan(0);
      expect(calls.complete).toBeGreaterThan(0);
    });
  },
);
