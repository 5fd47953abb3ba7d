import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

interface PoolClient {
  listenerCount(event: string): number;
}

/**
 * pg-pool hears a client's `error` only while it is idle, and TypeORM adds no listener when it
 * hands one out: until the borrower's code ran, an `error` emitted in the same tick (the server
 * ending a connection in the packet that completed it: a restart, a failover, a dropped
 * database) had no listener and ended the process. Seen once in CI as "Unhandled error.
 * (error: terminating connection due to administrator command)" after a worker closed.
 */
describeDialects(
  'pooled connections are heard from the moment they are handed out',
  (db) => {
    let app: QueueApp;
    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['t'], poolSize: 6 });
    });
    afterAll(() => app?.close());

    it("every client has an 'error' listener between the pool's hand-out and the borrower's first line", async () => {
      const pool = (app.dataSource.driver as unknown as { master: { on(e: 'acquire', l: (c: PoolClient) => void): void; totalCount: number } }).master;
      const heard: number[] = [];
      // 'acquire' is emitted as the client is handed out; this microtask runs after pg-pool has
      // taken its idle listener off and before the borrower's continuation.
      pool.on('acquire', (client) => queueMicrotask(() => heard.push(client.listenerCount('error'))));
      // Statements at once, so that the pool opens new clients as well as handing out idle ones.
      await Promise.all(Array.from({ length: 12 }, (_, i) => app.queue.enqueue({ type: 't', args: { i } })));
      await Promise.all(Array.from({ length: 6 }, () => app.queue.stats()));
      expect(pool.totalCount).toBeGreaterThan(1);
      expect(heard.length).toBeGreaterThanOrEqual(18);
      expect(heard.filter((n) => n === 0)).toEqual([]);
    });
  },
  ['postgres'],
);
