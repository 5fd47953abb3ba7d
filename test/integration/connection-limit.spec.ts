import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { JobHandler } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { MYSQL_URL, PG_URL } from '../support/test-databases';

@Injectable()
class Quick {
  @JobHandler('quick')
  async run(): Promise<string> {
    await new Promise((r) => setTimeout(r, 5));
    return 'ok';
  }
}

/**
 * The server refuses a new connection for capacity (PostgreSQL's "too many connections for
 * role", SQLSTATE 53300; MySQL's max_user_connections, 1226), while the pool is allowed more than
 * that: a user's replicas × poolSize above the server's limit. Whatever statement needed the new
 * connection must wait and retry like any outage, not treat it as the database refusing a job's
 * result (which failed the attempt). SQLite has no connections to refuse.
 */
describeDialects(
  'a server that refuses new connections for capacity',
  (db) => {
    const user = `jq_lim_${randomBytes(3).toString('hex')}`;
    // PostgreSQL: the LISTEN connection holds one for good; one more is left for the work. (pg-pool
    // hands a refused connect's error to the statement that asked rather than queueing it for the
    // busy connection: at pollIntervalMs 20 every claim met the 10 ms paused refresh and failed,
    // 60 s without progress; at 100 the worker gets through.)
    const LIMIT = db.dialect === 'postgres' ? 2 : 1;
    let app: QueueApp;
    let producer: QueueApp;

    /** Statements as the server's superuser (the test database may be dropped already). */
    async function admin<T>(work: (run: (text: string) => Promise<unknown>) => Promise<T>): Promise<T> {
      if (db.dialect === 'postgres') {
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        try {
          return await work((text) => c.query(text));
        } finally {
          await c.end();
        }
      }
      const c = await mysql.createConnection(MYSQL_URL);
      try {
        return await work((text) => c.query(text));
      } finally {
        await c.end();
      }
    }

    beforeAll(async () => {
      // A role of its own (superusers are exempt from connection limits), limited once the app
      // has booted: the connections it holds stay, any new one is refused.
      await admin(async (run) => {
        if (db.dialect === 'postgres') {
          await run(`CREATE ROLE ${user} LOGIN`);
          await run(`ALTER DATABASE ${db.name} OWNER TO ${user}`);
        } else {
          await run(`CREATE USER '${user}'@'%'`);
          await run(`GRANT ALL ON \`${db.name}\`.* TO '${user}'@'%'`);
        }
      });
      const url = new URL(db.location);
      url.username = user;
      app = await startQueueApp(db, { url: url.toString(), poolSize: 10, concurrency: 8, pollIntervalMs: 100 }, [Quick]);
      producer = await startQueueApp(db, { worker: false, externalTypes: ['quick'] });
      // Then every connection it holds is cut (idle: nothing is enqueued yet); its pool may open
      // LIMIT again, and is refused beyond.
      await admin(async (run) => {
        if (db.dialect === 'postgres') {
          await run(`ALTER ROLE ${user} CONNECTION LIMIT ${LIMIT}`);
          await run(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${user}'`);
        } else {
          await run(`ALTER USER '${user}'@'%' WITH MAX_USER_CONNECTIONS ${LIMIT}`);
          const [rows] = (await run(`SELECT id FROM information_schema.processlist WHERE user = '${user}'`)) as [Array<{ id: number }>];
          for (const { id } of rows) await run(`KILL ${id}`).catch(() => undefined);
        }
      });
      await new Promise((r) => setTimeout(r, 300));
    });
    afterAll(async () => {
      await app?.close();
      await producer?.close();
      await admin(async (run) => {
        if (db.dialect === 'postgres') await run(`DROP ROLE IF EXISTS ${user}`);
        else await run(`DROP USER IF EXISTS '${user}'@'%'`);
      });
    });

    it('every job completes on its first and only attempt', async () => {
      const jobs = Array.from({ length: 300 }, (_, i) => ({ ref: `q${i}`, type: 'quick', maxAttempts: 1 }));
      const ids = Object.values(await producer.queue.enqueueGraph(jobs));
      const results = await Promise.all(ids.map((id) => producer.queue.waitFor(id, { timeoutMs: 60_000 }).then((v) => v.state, (err: Error) => err.message)));
      const failed = await producer.rows(`SELECT id, state, attempts, lease_owner, last_error FROM jobs WHERE state <> 'done' ORDER BY id`);
      expect(failed.slice(0, 5)).toEqual([]);
      expect(results.filter((s) => s !== 'done')).toEqual([]);
    }, 120_000);
  },
  ['postgres', 'mysql'],
);
