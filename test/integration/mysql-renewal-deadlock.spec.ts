import mysql from 'mysql2/promise';
import { cascade } from '../../lib/finalize/cascade.sql';
import { completeJobs } from '../../lib/finalize/complete.sql';
import { renewLeases, type TransactionalExecutor } from '../../lib/lease/lease.sql';
import type { Sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

/**
 * A lease renewal and a finalize that promotes many dependents, at the same moment, the way they
 * met on MariaDB during a 100,000-way fan-out: the finalize has completed the root (holding its
 * row lock) and is promoting; the worker's heartbeat renews its leases, the root among them, on a
 * pooled connection in autocommit at the server's default REPEATABLE READ. A renewal that searched
 * the in-flight index (state, lease_expires) with a locking UPDATE held next-key locks over the
 * gap where the promotion's 'ready' entries go, while waiting for the root's lock: a deadlock.
 */
describeDialects(
  'MySQL lease renewal beside a big promotion',
  (db) => {
    let app: QueueApp;
    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['noop'] });
    });
    afterAll(() => app?.close());

    /** A SqlExecutor on a connection of its own, at the server's default isolation. */
    function executorOn(conn: mysql.Connection): SqlExecutor {
      return {
        dialect: app.db.dialect,
        run: async (statement: Sql) => {
          const { text, params } = statement.render('mysql');
          const [res] = await conn.query(text, params);
          if (Array.isArray(res)) return { rows: res as Record<string, unknown>[], affected: 0 };
          return { rows: [], affected: (res as mysql.ResultSetHeader).affectedRows };
        },
      };
    }

    /** The same, with transactions on that connection (at its REPEATABLE READ). */
    function withTransactions(conn: mysql.Connection): TransactionalExecutor {
      const executor = executorOn(conn);
      return {
        ...executor,
        transaction: async (work) => {
          await conn.query('START TRANSACTION');
          try {
            const out = await work(executor);
            await conn.query('COMMIT');
            return out;
          } catch (err) {
            await conn.query('ROLLBACK');
            throw err;
          }
        },
      };
    }

    it('the renewal skips the row the finalize holds instead of deadlocking with it, 6 rounds, both forms of the complete', async () => {
      for (let round = 0; round < 6; round++) {
        const nodes = [{ ref: 'root', type: 'noop' }, ...Array.from({ length: 2_000 }, (_, i) => ({ ref: `d${i}`, type: 'noop', dependsOn: ['root'] }))];
        const ids = await app.queue.enqueueGraph(nodes);
        // Two more of the worker's jobs in flight besides the root, on both sides of it in the index.
        const others = await app.queue.enqueueGraph([{ ref: 'a', type: 'noop' }, { ref: 'b', type: 'noop' }]);
        const owner = `w${round}`;
        await app.rows(`UPDATE jobs SET state = 'running', lease_owner = ?, lease_expires = NOW(3) + INTERVAL 1 HOUR WHERE id IN (?, ?, ?)`, [
          owner,
          ids.root,
          others.a,
          others.b,
        ]);

        const fin = await mysql.createConnection(db.location);
        const hb = await mysql.createConnection(db.location); // server default: REPEATABLE READ
        try {
          await fin.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
          await fin.query('START TRANSACTION');
          const tx = executorOn(fin);
          // Even rounds: the worker's count-guarded UPDATE alone; odd: the locking read, then the UPDATE.
          expect(await completeJobs(tx, owner, [{ id: ids.root, resultJson: 'null', parentId: null }], undefined, round % 2 === 0)).toHaveLength(1);
          const renewal = renewLeases(withTransactions(hb), owner, 30_000);
          const promoted = await cascade(tx, [{ id: ids.root, parentId: null, outcome: 'done' }]);
          // The renewal skipped the root (the finalize holds its lock) and renewed the others; the
          // root still counts as held until the finalize commits.
          const held = await renewal;
          await fin.query('COMMIT');
          expect(promoted.promoted).not.toBe(0);
          expect(await app.count(`state = 'ready' AND id <> ${others.a} AND id <> ${others.b}`)).toBe(2_000);
          expect([...held].sort((x, y) => x - y)).toEqual([ids.root, others.a, others.b].sort((x, y) => x - y));
          expect(await app.count(`id IN (${others.a}, ${others.b}) AND lease_expires < NOW(3) + INTERVAL 31 SECOND`)).toBe(2); // renewed: 30 s from now
          expect(await app.count(`id = ${ids.root} AND state = 'done'`)).toBe(1);
        } finally {
          await fin.end();
          await hb.end();
        }
        await app.rows(`DELETE FROM job_deps`);
        await app.rows(`DELETE FROM jobs`);
      }
    }, 120_000);
  },
  ['mysql'],
);
