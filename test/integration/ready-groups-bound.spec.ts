import { rotationCursorName } from '../../lib/claim/rotation-cursor';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

const CURSOR = rotationCursorName(['t']);

/**
 * The rotation claim walks the ready groups from its cursor and, when fewer groups than slots lie
 * after it, wraps round to the groups below the first one it took. That walk must stop at its end
 * bound. Before PostgreSQL migration 25 the bound was a filter, so once the groups below it were
 * taken the walk read every ready job from the bound on and filtered each out: with a backlog of
 * a few large groups (a worker starting, or woken, with the rotation's plan) every such claim
 * read the whole backlog. Measured by the buffers each call reads, which count the function's
 * own statements and do not depend on the machine; repeated past the five custom plans, since
 * the generic plan is the one that lacked the bound.
 */
describeDialects(
  "the rotation's wrap-around walk stops at its bound, beside a backlog of 120,000 ready jobs",
  (db) => {
    let app: QueueApp;
    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
      await app.rows(`INSERT INTO jobs (type, args, state, group_key, weight, priority, run_after, max_attempts, created_at, updated_at)
        SELECT 't', '{}', 'ready', 'g' || (i % 3), 1, 0, now(), 3, now(), now() FROM generate_series(1, 120000) i`);
      await app.rows(`ANALYZE jobs`);
    }, 120_000);
    afterAll(() => app?.close());

    /** Shared buffers one call reads (its nested statements included), and its rows. */
    type Plan = { 'Shared Hit Blocks': number; 'Shared Read Blocks': number; 'Actual Rows': number };
    const explain = async (call: string, query: (text: string) => Promise<unknown[]> = (text) => app.rows(text)) => {
      const [row] = (await query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT * FROM ${call}`)) as Array<{ 'QUERY PLAN': Array<{ Plan: Plan }> }>;
      const plan = row['QUERY PLAN'][0].Plan;
      return { buffers: plan['Shared Hit Blocks'] + plan['Shared Read Blocks'], rows: plan['Actual Rows'] };
    };

    it('the walk below a bound reads a few buffers, however many jobs lie above it', async () => {
      const qr = app.dataSource.createQueryRunner();
      try {
        const buffers: number[] = [];
        await qr.query(`INSERT INTO job_queue_rotation (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, [CURSOR]);
        for (let call = 0; call < 9; call++) {
          // g0 lies below the bound g1; g1 and g2 (80,000 ready jobs) lie above it.
          const walk = await explain(`job_queue_ready_groups('{t}', '', 'g1', 11)`, (text) => qr.query(text));
          expect(walk.rows).toBe(1);
          buffers.push(walk.buffers);
        }
        // The first call of a connection also reads the catalog to plan the function's statements.
        // 17 buffers before migration 28, 19-20 since: its look for paused groups reads two.
        expect(Math.max(...buffers.slice(1))).toBeLessThan(24);
      } finally {
        await qr.release();
      }
    });

    it('a rotation claim that wraps round reads a few buffers and takes a job of every group', async () => {
      // One connection, so that each claim is rolled back and the next finds the same backlog.
      const qr = app.dataSource.createQueryRunner();
      try {
        const buffers: number[] = [];
        await qr.query(`INSERT INTO job_queue_rotation (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, [CURSOR]);
        for (let call = 0; call < 9; call++) {
          await qr.query(`BEGIN`);
          try {
            // The cursor at g1, its visit done: the walk takes g2, then wraps round to g0 and g1.
            await qr.query(`UPDATE job_queue_rotation SET group_key = 'g1', served = 1 WHERE name = $1`, [CURSOR]);
            const claim = await explain(`job_queue_claim_rotation('w', '{t}', 3, 30000, true, '{}', '{}', NULL, '${CURSOR}')`, (text) => qr.query(text));
            expect(claim.rows).toBe(3);
            buffers.push(claim.buffers);
          } finally {
            await qr.query(`ROLLBACK`);
          }
        }
        // Calls 2-6 run custom plans, planned at each call, 7-9 the generic plan: 97, 97, 89, 89,
        // 89, 85, 85, 85 buffers, and 100, 100, 90, 90, 90, 85, 85, 85 since migration 44, whose
        // index on jobs the planner looks up while it plans (the claim's own reads are the same).
        // This is the form workers call since migration 47 (the one before tested the form of
        // migration 7): 119, 100, 90, 90, 91, 85, 85, 85, the second call planning the weight
        // set's lookup too (migration 33's form reads the same). A walk past its bound read thousands.
        expect(Math.max(...buffers.slice(1))).toBeLessThan(130);
        expect(Math.max(...buffers.slice(6))).toBeLessThan(90);
      } finally {
        await qr.release();
      }
    });
  },
  ['postgres'],
);
