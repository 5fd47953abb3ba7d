import { allLimitLockNames, ensureLimitRows } from '../../lib/claim/limit-locks.sql';
import { sql } from '../../lib/database/sql';
import { allRateLimitNames, ensureRateLimitRows } from '../../lib/rate-limit/rate-limit.sql';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

const TYPES = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`t${i}`, { limit: 5, intervalMs: 1000 }]));
const GROUPS = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`g${i}`, { limit: 5, intervalMs: 1000 }]));
const WORKERS = 8;
const ROUNDS = 25;

/**
 * Workers that start together insert the same limit and rate-limit rows. On MySQL the duplicate
 * checks of concurrent multi-row INSERT IGNOREs take shared next-key locks and can deadlock (seen
 * in CI: three worker processes with rate limits, one failed to boot). The rows go in in name
 * lock order, the order claimers lock them in (global, types, groups), and each insert runs in a transaction, which retries a
 * deadlock; every start-up must succeed and leave each row once.
 */
describeDialects('start-up rows inserted by many workers at once', (db) => {
  let app: QueueApp;
  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['noop'] });
  });
  afterAll(() => app?.close());

  it('a start-up beside a claimer that holds one window and then takes another: neither fails, 10 rounds', async () => {
    const names = allRateLimitNames({ types: { email: { limit: 5, intervalMs: 1000 } }, groups: { acme: { limit: 5, intervalMs: 1000 } } });
    await app.db.transaction((tx) => ensureRateLimitRows(tx, names));
    const lock = (name: string) => sql`SELECT name FROM job_queue_rate_limits WHERE name = ${name}${db.dialect === 'sqlite' ? sql`` : sql` FOR UPDATE`}`;
    for (let round = 0; round < 10; round++) {
      let locked!: () => void;
      const holding = new Promise<void>((r) => (locked = r));
      // The claimer, in lock order (lib/claim/lock-order.ts): the type's window, then the group's.
      const claimer = app.db.transaction(async (tx) => {
        await tx.run(lock('type:email'));
        locked();
        await sleep(150); // the start-up's insert is now waiting on 'type:email'
        await tx.run(lock('group:acme'));
      }, { retries: 0 });
      await holding;
      // A worker starting: its INSERT IGNORE met 'group:acme' first when it inserted by plain name order.
      const startUp = app.db.transaction((tx) => ensureRateLimitRows(tx, names), { retries: 0 });
      const [c, s] = await Promise.allSettled([claimer, startUp]);
      expect({ round, claimer: c.status === 'rejected' ? String(c.reason) : 'ok', startUp: s.status === 'rejected' ? String(s.reason) : 'ok' }).toEqual({ round, claimer: 'ok', startUp: 'ok' });
    }
  }, 60_000);

  it(`${WORKERS} concurrent start-ups of 40 limit rows and 40 rate-limit rows, ${ROUNDS} rounds: none fails`, async () => {
    const limitNames = allLimitLockNames({ global: 10, types: TYPES, groups: GROUPS } as never);
    const rateNames = allRateLimitNames({ types: TYPES, groups: GROUPS });
    for (let round = 0; round < ROUNDS; round++) {
      await app.db.run(sql`DELETE FROM job_queue_locks`);
      await app.db.run(sql`DELETE FROM job_queue_rate_limits`);
      const starts = Array.from({ length: WORKERS }, () =>
        Promise.all([
          app.db.transaction((tx) => ensureLimitRows(tx, limitNames)),
          app.db.transaction((tx) => ensureRateLimitRows(tx, rateNames)),
        ]),
      );
      const outcomes = await Promise.allSettled(starts);
      expect(outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason))).toEqual([]);
      expect(Number((await app.rows(`SELECT COUNT(*) AS n FROM job_queue_locks`))[0].n)).toBe(limitNames.length);
      expect(Number((await app.rows(`SELECT COUNT(*) AS n FROM job_queue_rate_limits`))[0].n)).toBe(rateNames.length);
    }
  }, 120_000);

  it('70,000 named groups: more rows than one statement may bind (32,766 on SQLite, 65,535 elsewhere) go in, each once', async () => {
    const many = Object.fromEntries(Array.from({ length: 70_000 }, (_, i) => [`tenant-${i}`, 2]));
    const limitNames = allLimitLockNames({ global: 10, groups: many } as never);
    const rateNames = allRateLimitNames({ types: {}, groups: Object.fromEntries(Object.keys(many).map((g) => [g, { limit: 5, intervalMs: 1000 }])) });
    await app.db.run(sql`DELETE FROM job_queue_locks`);
    await app.db.run(sql`DELETE FROM job_queue_rate_limits`);
    // Twice: the second start-up meets every row already there.
    for (let i = 0; i < 2; i++) {
      await app.db.transaction((tx) => ensureLimitRows(tx, limitNames));
      await app.db.transaction((tx) => ensureRateLimitRows(tx, rateNames));
    }
    expect(Number((await app.rows(`SELECT COUNT(*) AS n FROM job_queue_locks`))[0].n)).toBe(70_001);
    expect(Number((await app.rows(`SELECT COUNT(*) AS n FROM job_queue_rate_limits`))[0].n)).toBe(70_000);
  }, 120_000);
});
