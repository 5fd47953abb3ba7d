import { DataSource } from 'typeorm';
import { sql } from '../../lib/database/sql';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

/**
 * The queue's transactions on MySQL/MariaDB must run at READ COMMITTED: a REPEATABLE READ
 * snapshot would hide a concurrent finalize. On its own DataSource the queue sets that once per
 * connection for the session; on an application's DataSource it must leave the sessions alone.
 */
describeDialects(
  'MySQL isolation of the queue transactions',
  (db) => {
    /** Inside one queue transaction: read, let another connection commit a change, read again. */
    async function secondReadSeesConcurrentCommit(app: QueueApp, other: DataSource): Promise<boolean> {
      const { id } = await app.queue.enqueue({ type: 't' });
      let seen = -1;
      await app.db.transaction(async (tx) => {
        await tx.run(sql`SELECT progress FROM jobs WHERE id = ${id}`);
        await other.query(`UPDATE jobs SET progress = 50 WHERE id = ?`, [id]);
        seen = Number((await tx.run(sql`SELECT progress FROM jobs WHERE id = ${id}`)).rows[0].progress);
      });
      return seen === 50;
    }

    it('its own DataSource: every transaction reads committed data, on every pooled connection', async () => {
      const app = await startQueueApp(db, { worker: false, externalTypes: ['t'], poolSize: 3 });
      const other = new DataSource({ type: 'mysql', url: db.location });
      await other.initialize();
      try {
        // More rounds than connections, several at once, so each connection serves more than one.
        for (let round = 0; round < 3; round++) {
          const seen = await Promise.all([1, 2, 3, 4].map(() => secondReadSeesConcurrentCommit(app, other)));
          expect(seen).toEqual([true, true, true, true]);
        }
      } finally {
        await other.destroy();
        await app.close();
      }
    });

    it("an application's DataSource: transactions read committed data, and its sessions keep their level", async () => {
      const appDs = new DataSource({ type: 'mysql', url: db.location, poolSize: 2 });
      await appDs.initialize();
      const app = await startQueueApp(db, { dataSource: appDs, url: undefined, worker: false, externalTypes: ['t'] });
      const other = new DataSource({ type: 'mysql', url: db.location });
      await other.initialize();
      try {
        for (let round = 0; round < 3; round++) expect(await secondReadSeesConcurrentCommit(app, other)).toBe(true);
        // The application's own transaction on that DataSource still gets the server default.
        const levels = await appDs.transaction(async (manager) => {
          const [row] = await manager.query(`SELECT @@session.tx_isolation AS level`).catch(() => manager.query(`SELECT @@session.transaction_isolation AS level`));
          return String(row.level);
        });
        expect(levels).toBe('REPEATABLE-READ');
      } finally {
        await other.destroy();
        await app.close();
        await appDs.destroy();
      }
    });
  },
  ['mysql'],
);
