import { DataSource } from 'typeorm';
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

    it("queues that share the application's DataSource hear its pool once, however many open", async () => {
      const appDs = new DataSource({ type: 'postgres', url: db.location, poolSize: 4 } as never);
      await appDs.initialize();
      const pool = (appDs.driver as unknown as { master: { listenerCount(e: string): number; _clients: PoolClient[] } }).master;
      const queues: QueueApp[] = [];
      try {
        // Twelve: past Node's ten-listener warning, which stacked listeners would have crossed.
        for (let i = 0; i < 12; i++) queues.push(await startQueueApp(db, { dataSource: appDs, url: undefined, worker: false, externalTypes: ['t'] }));
        await Promise.all(queues.map((q, i) => q.queue.enqueue({ type: 't', args: { i } })));
        expect(pool.listenerCount('connect')).toBe(1);
        expect(pool._clients.length).toBeGreaterThan(0);
        // pg-pool's own idle listener may be on an idle client as well; ours is on it once.
        for (const client of pool._clients) expect(client.listenerCount('error')).toBeLessThanOrEqual(2);
      } finally {
        for (const q of queues) await q.close();
        await appDs.destroy();
      }
    });
  },
  ['postgres'],
);
