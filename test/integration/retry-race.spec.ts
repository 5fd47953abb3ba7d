import { describeDialects } from '../support/describe-dialects';
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
    // Lock waits in this spec's database only: other specs share the server.
    const lockWaits = async () =>
      Number(
        (
          await app.rows(
            db.dialect === 'postgres'
              ? `SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`
              : `SELECT COUNT(*) AS n FROM information_schema.innodb_trx t JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id
                 WHERE t.trx_state = 'LOCK WAIT' AND p.db = DATABASE()`,
          )
        )[0].n,
      );

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
        // Every 200 ms: MariaDB refreshes innodb_trx only when it was not read for 100 ms.
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
  },
  ['postgres', 'mysql'],
);
