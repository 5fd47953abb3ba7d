import { nextReadyGroups } from '../../lib/claim/rotation.sql';
import type { Sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { describeDialects } from '../support/describe-dialects';
import { numbers } from '../support/number-rows';
import { startQueueApp, type QueueApp } from '../support/queue-app';

const SKIPPED = 2_000;
const SLOTS = 10;

/**
 * A PostgreSQL rotation under limits asks its walk for the groups this process skips (full rate
 * windows, caps, pauses) on top of its slots. It asked for all of them, up to 500, on every
 * claim, wherever the cursor stood: beside 2,000 full rate-limited tenants each claim walked 510
 * groups, and 3,000 jobs of unlimited tenants took 2.9 s instead of 0.9 s (a 2,000-tenant copy of
 * named-limits-scale's full-windows run). It now asks for a few more than its slots, then four
 * times more per call while calls come back short.
 */
describeDialects(
  `rotation walk beside ${SKIPPED.toLocaleString('en')} skipped groups`,
  (db) => {
    let app: QueueApp;
    const skipped = new Set(Array.from({ length: SKIPPED }, (_, i) => `s${String(i + 1).padStart(4, '0')}`));

    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
      // One ready job in each of a0001-a1000, s0001-s2000 (skipped) and z0001-z0100.
      const insert = (prefix: string, n: number) =>
        app.rows(`INSERT INTO jobs (type, args, state, group_key, weight, priority, run_after, max_attempts, created_at, updated_at)
          SELECT 't', '{}', 'ready', '${prefix}' || lpad(i::text, 4, '0'), 1, 0, now(), 3, now(), now() FROM ${numbers(app, n).render('postgres').text}`);
      await insert('a', 1_000);
      await insert('s', SKIPPED);
      await insert('z', 100);
      await app.rows('ANALYZE jobs');
    }, 120_000);
    afterAll(() => app?.close());

    /** One walk in a transaction rolled back: the groups found, and the walk's calls and the groups they returned. */
    async function walk(from: string): Promise<{ groups: string[]; calls: number; returned: number }> {
      let calls = 0;
      let returned = 0;
      let groups: string[] = [];
      const rollback = new Error('rollback');
      await app.db
        .transaction(async (tx) => {
          const counting: SqlExecutor = {
            dialect: tx.dialect,
            run: async (s: Sql) => {
              const result = await tx.run(s);
              if (s.render('postgres').text.includes('job_queue_ready_groups')) {
                calls++;
                returned += result.rows.length;
              }
              return result;
            },
          };
          groups = (await nextReadyGroups(counting, ['t'], from, SLOTS, undefined, true, skipped)).map((g) => g.group);
          throw rollback;
        })
        .catch((err) => {
          if (err !== rollback) throw err;
        });
      return { groups, calls, returned };
    }

    it('away from the skipped groups, a claim walks about its slots', async () => {
      const w = await walk('a0100');
      expect(w.groups).toEqual(Array.from({ length: SLOTS }, (_, i) => `a${String(100 + i).padStart(4, '0')}`));
      expect(w.calls).toBe(1);
      expect(w.returned).toBeLessThanOrEqual(2 * SLOTS);
    });

    it('at the start of the skipped run, it steps over all of them to the next groups', async () => {
      const w = await walk('s0001');
      expect(w.groups).toEqual(Array.from({ length: SLOTS }, (_, i) => `z${String(i + 1).padStart(4, '0')}`));
      // 20, 80, 320, then 510 a call: the run is crossed in a handful of calls.
      expect(w.calls).toBeLessThanOrEqual(8);
      expect(w.returned).toBeLessThan(SKIPPED + 8 * SLOTS + 600);
    });
  },
  ['postgres'],
);
