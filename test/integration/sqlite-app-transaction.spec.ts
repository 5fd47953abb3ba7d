import { DataSource } from 'typeorm';
import { AppTransactionOpenError, JobHandler, SqliteBusyError } from '../../lib';
import { APP_TRANSACTION_GRACE_MS } from '../../lib/enqueue/app-transaction.guard';
import { retrySqliteBusy } from '../../lib/database/retry-sqlite-busy';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

class Handlers {
  @JobHandler('t')
  async t(): Promise<string> {
    return 'ok';
  }
}

describeDialects(
  "enqueue inside the app's own SQLite transaction",
  (db) => {
    let appDs: DataSource;
    let app: QueueApp;
    beforeAll(async () => {
      // The app's own DataSource on the queue's file, configured as an app would (WAL, busy timeout).
      appDs = new DataSource({
        type: 'better-sqlite3',
        database: db.location,
        timeout: 5_000,
        prepareDatabase: (d: { pragma(s: string): unknown }) => void d.pragma('journal_mode = WAL'),
      });
      await appDs.initialize();
      await appDs.query('CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, total INTEGER)');
      app = await startQueueApp(db, { dataSource: appDs, pollIntervalMs: 20 }, [Handlers]);
    });
    afterAll(async () => {
      await app?.close();
      await appDs?.destroy();
    });

    it('fails fast with a typed error naming { manager } instead of waiting a minute on the lock', async () => {
      const started = Date.now();
      const err = await appDs
        .transaction(async (manager) => {
          await manager.query('INSERT INTO orders (total) VALUES (1)'); // the app's write lock
          await app.queue.enqueue({ type: 't' });
        })
        .catch((e) => e);
      expect(err).toBeInstanceOf(AppTransactionOpenError);
      expect(err.message).toMatch(/pass that transaction's manager \(`queue\.enqueue\(job, \{ manager \}\)`\)/);
      expect(Date.now() - started).toBeLessThan(APP_TRANSACTION_GRACE_MS + 5_000);
      expect(await app.count()).toBe(0);
      expect(Number((await appDs.query('SELECT COUNT(*) AS n FROM orders'))[0].n)).toBe(0); // rolled back
    });

    it('with { manager } the job joins the transaction and commits with it', async () => {
      const job = await appDs.transaction(async (manager) => {
        await manager.query('INSERT INTO orders (total) VALUES (2)');
        return app.queue.enqueue({ type: 't' }, { manager });
      });
      expect(await app.queue.waitFor(job.id, { timeoutMs: 20_000 })).toMatchObject({ state: 'done', result: 'ok' });
    });

    it('waits for a transaction of another flow that commits within the grace period', async () => {
      let commit!: () => void;
      const other = appDs.transaction(async (manager) => {
        await manager.query('INSERT INTO orders (total) VALUES (3)');
        await new Promise<void>((r) => (commit = r));
      });
      await new Promise((r) => setTimeout(r, 20));
      setTimeout(() => commit(), 200);
      const job = await app.queue.enqueue({ type: 't' });
      await other;
      // The enqueue waited and wrote the job (no AppTransactionOpenError). Its view is read after
      // the commit, so this worker (20 ms poll, woken by the enqueue) may already have claimed it:
      // 'ready' is not promised, the job's run is.
      expect(job).toMatchObject({ type: 't' });
      expect(await app.queue.waitFor(job.id, { timeoutMs: 20_000 })).toMatchObject({ state: 'done', result: 'ok' });
    });

    it('a lock that outlasts the busy deadline becomes a SqliteBusyError that names the likely cause', async () => {
      const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
      const err = await retrySqliteBusy(() => Promise.reject(busy), 50).catch((e) => e);
      expect(err).toBeInstanceOf(SqliteBusyError);
      expect(err.cause).toBe(busy);
      expect(err.message).toMatch(/stayed locked by another connection .*database is locked.*\{ manager \}/);
    });
  },
  ['sqlite'],
);
