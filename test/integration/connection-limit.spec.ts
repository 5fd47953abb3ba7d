import { randomBytes } from 'node:crypto';
import { jest } from '@jest/globals';
import { Injectable, Logger } from '@nestjs/common';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { JobHandler, type JobContext } from '../../lib';
import { poolGauge } from '../../lib/database/cap-pool';
import { sql } from '../../lib/database/sql';
import { NOTIFY_CHANNEL } from '../../lib/notify/notify.sql';
import { PgNotifyListener } from '../../lib/notify/pg-notify.listener';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { MYSQL_URL, PG_URL } from '../support/test-databases';
import { eventually } from '../support/wait';

@Injectable()
class Quick {
  @JobHandler('quick')
  async run(): Promise<string> {
    await new Promise((r) => setTimeout(r, 5));
    return 'ok';
  }

  /** Statements of its own while it runs: several jobs at once want several connections. */
  @JobHandler('busy')
  async busy(_args: unknown, ctx: JobContext): Promise<string> {
    for (const percent of [25, 50, 75]) await ctx.progress(percent);
    return 'ok';
  }
}

/**
 * The server refuses a new connection for capacity (PostgreSQL's "too many connections for
 * role", SQLSTATE 53300; MySQL's max_user_connections, 1226), while the pool is allowed more than
 * that: a user's replicas × poolSize above the server's limit. No job may fail for it (the
 * finalizer took the refusal for the database refusing the job's result and failed the attempt),
 * and the worker must keep going: the pool keeps to the connections it has rather than asking
 * for more and failing (claims that met another statement in flight failed one after another,
 * 60 s without a job started on a loaded machine). SQLite has no connections to refuse.
 */
describeDialects(
  'a server that refuses new connections for capacity',
  (db) => {
    const user = `jq_lim_${randomBytes(3).toString('hex')}`;
    // PostgreSQL: the LISTEN connection holds one for good; one more is left for the work.
    const LIMIT = db.dialect === 'postgres' ? 2 : 1;
    const POOL = 10;
    let app: QueueApp;
    let producer: QueueApp;

    /** Statements as the server's superuser; on PostgreSQL in the test database with `inTestDatabase`. */
    async function admin<T>(work: (run: (text: string) => Promise<unknown>) => Promise<T>, inTestDatabase = false): Promise<T> {
      if (db.dialect === 'postgres') {
        const c = new pg.Client({ connectionString: inTestDatabase ? db.location : PG_URL });
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
      app = await startQueueApp(db, { url: url.toString(), poolSize: POOL, concurrency: 8, pollIntervalMs: 20 }, [Quick]);
      producer = await startQueueApp(db, { worker: false, externalTypes: ['quick', 'busy'] });
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
      // The cut LISTEN connection comes back with its back-off (200 ms, then 400, 800, … after a
      // refusal): its "restored" line is this setup's, not the second case's quiet window, into
      // which a slow reconnect on a loaded machine spilled.
      if (db.dialect === 'postgres') {
        const listener = app.module.get(PgNotifyListener);
        await eventually('LISTEN back after the cut', async () => listener.isListening(NOTIFY_CHANNEL), 30_000, 10);
      }
    });
    afterAll(async () => {
      await app?.close();
      await producer?.close();
      // Before the test database is dropped: the role owns it and the tables in it, which it
      // hands back to the superuser first (REASSIGN OWNED reaches the current database's objects).
      await admin(async (run) => {
        if (db.dialect === 'postgres') {
          await run(`REASSIGN OWNED BY ${user} TO CURRENT_USER`);
          await run(`DROP OWNED BY ${user}`);
          await run(`DROP ROLE IF EXISTS ${user}`);
        } else await run(`DROP USER IF EXISTS '${user}'@'%'`);
      }, true);
    });

    it('every job completes on its first and only attempt, the pool keeping to the connections it has', async () => {
      const jobs = Array.from({ length: 300 }, (_, i) => ({ ref: `q${i}`, type: 'quick', maxAttempts: 1 }));
      const ids = Object.values(await producer.queue.enqueueGraph(jobs));
      const results = await Promise.all(ids.map((id) => producer.queue.waitFor(id, { timeoutMs: 60_000 }).then((v) => v.state, (err: Error) => err.message)));
      const failed = await producer.rows(`SELECT id, state, attempts, lease_owner, last_error FROM jobs WHERE state <> 'done' ORDER BY id`);
      expect(failed.slice(0, 5)).toEqual([]);
      expect(results.filter((s) => s !== 'done')).toEqual([]);
      // The server did refuse, and the pool now keeps to what it had (LISTEN's and one, or one).
      const driver = app.dataSource.driver as unknown as { master?: { options: { max: number } }; pool?: { config: { connectionLimit: number } } };
      expect(driver.master?.options.max ?? driver.pool?.config.connectionLimit).toBe(LIMIT);
    }, 120_000);

    /** Enqueues `n` busy jobs of one attempt each; resolves with their ids. */
    async function busyJobs(n: number): Promise<number[]> {
      return Object.values(await producer.queue.enqueueGraph(Array.from({ length: n }, (_, i) => ({ ref: `b${i}`, type: 'busy', maxAttempts: 1 }))));
    }

    it('probes rarely and quietly while the limit holds, and once it is lifted climbs back to poolSize and uses it', async () => {
      const logs: string[] = [];
      for (const level of ['log', 'warn', 'error'] as const) {
        jest.spyOn(Logger.prototype, level).mockImplementation((message: unknown) => void logs.push(`${level}: ${String(message)}`));
      }
      const recovery = app.db.poolRecovery!;
      const pool = () => poolGauge(app.dataSource)!;
      try {
        // The limit holds: 4 s of jobs, none failing, the pool kept low, probes backing off.
        const probedBefore = recovery.probes.made;
        const held: number[] = [];
        for (const start = Date.now(); Date.now() - start < 4_000; await new Promise((r) => setTimeout(r, 250))) held.push(...(await busyJobs(20)));
        await Promise.all(held.map((id) => producer.queue.waitFor(id, { timeoutMs: 60_000 })));
        const probesWhileHeld = recovery.probes.made - probedBefore;
        expect(await producer.count(`state <> 'done' OR attempts <> 1`)).toBe(0);
        expect(pool().limit).toBe(LIMIT);
        expect(probesWhileHeld).toBeLessThanOrEqual(3); // 1 s, 2 s, 4 s, … apart (±25%)
        expect(logs).toEqual([]);

        // Lifted: under a trickle of jobs the pool climbs back within the back-off reached and a step per probe.
        await admin(async (run) => {
          if (db.dialect === 'postgres') await run(`ALTER ROLE ${user} CONNECTION LIMIT -1`);
          else await run(`ALTER USER '${user}'@'%' WITH MAX_USER_CONNECTIONS 0`);
        });
        const lifted = Date.now();
        let trickling = true;
        const trickle = (async () => {
          while (trickling) {
            await busyJobs(10);
            await new Promise((r) => setTimeout(r, 100));
          }
        })();
        await eventually('the pool back to poolSize', async () => pool().limit === POOL, 45_000, 20).finally(() => (trickling = false));
        const restoredMs = Date.now() - lifted;
        await trickle;

        // The full pool at work: a burst of jobs holds more connections than the limit allowed.
        let peak = 0;
        const sampler = setInterval(() => (peak = Math.max(peak, pool().open)), 5);
        const burst = await busyJobs(400);
        await Promise.all(burst.map((id) => producer.queue.waitFor(id, { timeoutMs: 60_000 })));
        clearInterval(sampler);
        expect(await producer.count(`state <> 'done' OR attempts <> 1`)).toBe(0);
        expect(peak).toBeGreaterThan(LIMIT);
        expect(logs).toEqual([`log: the database has room again: the queue's pool is back to its ${POOL} connections`]);
        // Bound: the back-off reached while held (at most 16 s × 1.25) and 8 steps of 250 ms (× 1.25).
        expect(restoredMs).toBeLessThan(25_000);
        process.stdout.write(`[${db.dialect}] connection-limit: ${probesWhileHeld} probe(s) in the 4 s held, pool back to ${POOL} ${restoredMs} ms after the lift (${recovery.probes.made} probes, ${recovery.probes.refused} refused in all), peak ${peak} open in the burst\n`);
      } finally {
        jest.restoreAllMocks();
      }
    }, 120_000);

    it("leaves an application's DataSource as configured: neither lowered nor raised", async () => {
      await admin(async (run) => {
        if (db.dialect === 'postgres') await run(`ALTER ROLE ${user} CONNECTION LIMIT -1`);
        else await run(`ALTER USER '${user}'@'%' WITH MAX_USER_CONNECTIONS 0`);
      });
      const url = new URL(db.location);
      url.username = user;
      const appDs = new DataSource({ type: db.dialect === 'postgres' ? 'postgres' : 'mysql', url: url.toString(), poolSize: POOL } as never);
      await appDs.initialize();
      const shared = await startQueueApp(db, { dataSource: appDs, url: undefined, worker: false, externalTypes: ['quick'] });
      try {
        // PostgreSQL: room for the connections the role has and not one more.
        await admin(async (run) => {
          if (db.dialect === 'postgres') {
            const { rows } = (await run(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = '${user}'`)) as { rows: Array<{ n: number }> };
            await run(`ALTER ROLE ${user} CONNECTION LIMIT ${rows[0].n}`);
          } else {
            // MariaDB counts only the connections opened while a limit is set: room for one more.
            await run(`ALTER USER '${user}'@'%' WITH MAX_USER_CONNECTIONS 1`);
          }
        });
        // The queue's statements on it, several at once: more connections than the server allows.
        const sleep = db.dialect === 'postgres' ? sql`SELECT pg_sleep(0.2)` : sql`SELECT SLEEP(0.2)`;
        const opened = poolGauge(appDs)!.open;
        const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => shared.db.run(sleep)));
        process.stdout.write(`[${db.dialect}] app DataSource: ${opened} open before, ${outcomes.filter((o) => o.status === 'rejected').length} refused, open after ${poolGauge(appDs)!.open}\n`);
        // The refusals reach the application's statements, as its own pool would hand them out.
        expect(outcomes.some((o) => o.status === 'rejected')).toBe(true);
        expect(shared.db.poolRecovery).toBeUndefined();
        expect(poolGauge(appDs)!.limit).toBe(POOL);
      } finally {
        await shared.close();
        await appDs.destroy();
      }
    }, 60_000);
  },
  ['postgres', 'mysql'],
);
