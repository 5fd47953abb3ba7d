import { sql } from '../../lib/database/sql';
import { cascade } from '../../lib/finalize/cascade.sql';
import { describeDialects } from '../support/describe-dialects';
import { lockWaitCounter } from '../support/lock-waits';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

/**
 * retry() walks the closure of what to reopen with plain reads, then locks it. When another
 * transaction reopens part of that closure in between (a concurrent retry), the walk's edges no
 * longer tell which upstreams are still failed, and the retry must read them again after its
 * reset. SQLite runs one writer at a time, so the interleaving cannot happen there.
 */
describeDialects(
  'retry() racing another transaction on its closure',
  (db) => {
    let app: QueueApp;
    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
    });
    afterAll(() => app?.close());
    beforeEach(() => resetTables(app));

    const p = (n: number) => (db.dialect === 'postgres' ? `$${n}` : '?');
    const lockWaits = lockWaitCounter(() => app);

    it('a dependent the walk reached through a job reopened meanwhile is still cancelled if another upstream failed', async () => {
      // r → x → y ← z: r and z failed, x and y cancelled by them.
      const ids = await app.queue.enqueueGraph([
        { ref: 'r', type: 't' },
        { ref: 'x', type: 't', dependsOn: ['r'] },
        { ref: 'z', type: 't' },
        { ref: 'y', type: 't', dependsOn: ['x', 'z'] },
      ]);
      await app.rows(`UPDATE jobs SET state = 'failed', finished_at = CURRENT_TIMESTAMP, last_error = 'boom' WHERE id IN (${ids.r}, ${ids.z})`);
      await app.rows(`UPDATE jobs SET state = 'cancelled', finished_at = CURRENT_TIMESTAMP, last_error = 'upstream failed' WHERE id IN (${ids.x}, ${ids.y})`);

      const holder = app.dataSource.createQueryRunner();
      try {
        // Another transaction reopens x and holds it: retry(r)'s walk still reads x as cancelled
        // (the last committed state), then its lock waits for x.
        await holder.query(db.dialect === 'postgres' ? 'BEGIN' : 'START TRANSACTION');
        await holder.query(`UPDATE jobs SET state = 'waiting', finished_at = NULL, last_error = NULL WHERE id = ${p(1)}`, [ids.x]);
        const retrying = app.queue.retry(ids.r);
        await eventually('retry() waiting for the lock on x', async () => (await lockWaits()) > 0, 30_000, 200);
        await holder.query('COMMIT');
        await retrying;
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
        await holder.release();
      }

      expect((await app.queue.get(ids.r))!.state).toBe('ready');
      // y's upstreams are x (waiting now) and z (still failed): y must not wait for ever.
      expect(await app.queue.get(ids.y)).toMatchObject({ state: 'cancelled', lastError: 'cancelled: still depends on a failed or cancelled job' });
      expect((await app.queue.get(ids.z))!.state).toBe('failed');
    });

    // p ⊃ d, a → d; a runs, d was cancelled by hand (p rolled up failed). retry(d) locks d, then
    // waits for p (held below), and only then reads a. Meanwhile a's finalize ends a and runs its
    // cascade; then the retry reads a as still running (that finalize has not committed) and
    // reopens d to wait for it. The cascade must therefore wait for d's lock and see d reopened:
    // if it passes over d as cancelled, d waits for ever on a job that failed.
    const ends = [
      { end: 'done', expected: { state: 'ready' } },
      { end: 'failed', expected: { state: 'cancelled', lastError: 'cancelled: upstream job A failed or was cancelled' } },
      { end: 'cancelled', expected: { state: 'cancelled', lastError: 'cancelled: upstream job A failed or was cancelled' } },
    ] as const;
    // One job ending, or two (a cascade with several causes first reads which have open dependents).
    const cases = ends.flatMap((e) => [1, 2].map((jobs) => ({ ...e, jobs })));
    it.each(cases)("a dependent reopened by retry() while a finalize of $jobs job(s) ends its upstream $end is not left waiting", async ({ end, expected, jobs }) => {
      const ids = await app.queue.enqueueGraph([
        { ref: 'p', type: 't' },
        { ref: 'a', type: 't' },
        { ref: 'd', type: 't', parent: 'p', dependsOn: ['a'] },
        { ref: 'b', type: 't' },
      ]);
      const ending = jobs === 1 ? [ids.a] : [ids.a, ids.b];
      await app.rows(`UPDATE jobs SET state = 'running', attempts = 1, started_at = CURRENT_TIMESTAMP WHERE id IN (${ids.a}, ${ids.b})`);
      await app.queue.cancel(ids.d);
      expect((await app.queue.get(ids.p))!.state).toBe('failed');

      const holder = app.dataSource.createQueryRunner();
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let cascaded = false;
      let finalize: Promise<unknown> | undefined;
      try {
        await holder.query(db.dialect === 'postgres' ? 'BEGIN' : 'START TRANSACTION');
        await holder.query(`SELECT id FROM jobs WHERE id = ${p(1)} FOR UPDATE`, [ids.p]);
        const retrying = app.queue.retry(ids.d);
        await eventually('retry() waiting for the lock on p', async () => (await lockWaits()) > 0, 30_000, 200);
        // a's finalize, as the finalizer runs it: a ended, then the cascade, held uncommitted.
        finalize = app.db.transaction(async (tx) => {
          await tx.run(sql`UPDATE jobs SET state = ${end}, finished_at = ${tx.dialect.now()} WHERE id IN (${sql.list(ending)})`);
          await cascade(tx, ending.map((id) => ({ id, parentId: null, outcome: end })));
          cascaded = true;
          await released;
        });
        await eventually("the cascade done, or waiting for d's lock", async () => cascaded || (await lockWaits()) > 1, 30_000, 200);
        await holder.query('COMMIT');
        await retrying;
        release();
        await finalize;
      } finally {
        release();
        await finalize?.catch(() => undefined);
        await holder.query('ROLLBACK').catch(() => undefined);
        await holder.release();
      }
      const lastError = 'lastError' in expected ? { lastError: expected.lastError.replace('A', String(ids.a)) } : {};
      expect(await app.queue.get(ids.d)).toMatchObject({ ...expected, ...lastError });
      expect((await app.queue.get(ids.p))!.state).toBe(end === 'done' ? 'waiting' : 'failed');
    });
  },
  ['postgres', 'mysql'],
);
