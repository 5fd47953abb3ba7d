import { ClaimService, type ClaimRequest, type GraphNode } from '../../lib';
import type { TransactionOptions } from '../../lib/database/job-queue.database';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

/** A type name that would break a statement built by string concatenation. */
const ODD_TYPE = `q'\\"😀`;
/** The walks' cursor (a claim's would be rotationCursorName of its worker's types). */
const CURSOR = 'fair-share:spec';

interface Walk {
  cursor: { group: string; served: number };
  ids: number[];
  groups: string[];
}

/**
 * MySQL migration 16: the rotation walk steps over the (group, type) pairs with plain reads and
 * locks the heads it took at the end, by id (job_queue_cursor_walk_floors), so that it no longer
 * walks the delete-marked index entries of every job claimed since the last purge. It must pick
 * what migration 14's all-locking walk picks: the same groups, heads and order, whatever the
 * types, priorities, delays, paused groups, wrap round and group names.
 * (test/alone/mysql-rotation-floor-pages.spec.ts measures the pages it spares.)
 */
describeDialects(
  'MySQL rotation walk from each group’s first ready row',
  (db) => {
    let app: QueueApp;

    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['t', 'u', 'v', ODD_TYPE] });
    });
    afterAll(() => app.close());
    beforeEach(async () => {
      await resetTables(app);
      await app.rows(`INSERT IGNORE INTO job_queue_rotation (name) VALUES (?)`, [CURSOR]);
      await app.rows(`UPDATE job_queue_rotation SET group_key = '', served = 0`);
    });

    /** One CALL inside a transaction that is rolled back. */
    async function walk(procedure: string, types: string[], max: number, exclude: string[] | null): Promise<Walk> {
      const runner = app.dataSource.createQueryRunner();
      try {
        await runner.query('START TRANSACTION');
        const sets = (await runner.query(`CALL ${procedure}(?, ?, ?, ?)`, [CURSOR, JSON.stringify(types), max, exclude && JSON.stringify(exclude)])) as Array<Array<Record<string, unknown>>>;
        return {
          cursor: { group: String(sets[0][0].group_key ?? ''), served: Number(sets[0][0].served ?? 0) },
          ids: sets[1].map((row) => Number(row.id)),
          groups: sets[1].map((row) => String(row.group_key)),
        };
      } finally {
        await runner.query('ROLLBACK');
        await runner.release();
      }
    }

    const both = async (types: string[], max: number, exclude: string[] | null = null) => ({
      locking: await walk('job_queue_cursor_walk', types, max, exclude),
      floors: await walk('job_queue_cursor_walk_floors', types, max, exclude),
    });

    it('takes the same groups, heads and order as the all-locking walk', async () => {
      const future = new Date(Date.now() + 3_600_000);
      const nodes: GraphNode[] = [];
      const add = (group: string, type: string, extra: Partial<GraphNode> = {}) =>
        nodes.push({ ref: `n${nodes.length}`, type, group, ...extra } as GraphNode);
      for (let g = 0; g < 15; g++) {
        const group = `g${String(g).padStart(2, '0')}`;
        if (g === 3) {
          add(group, 'v'); // another worker's type only: a step of the walk, never taken
          continue;
        }
        if (g === 5) {
          add(group, 't', { runAfter: future }); // nothing due
          continue;
        }
        // A delayed head of t before due rows, u with a higher priority in some groups, v among them.
        if (g % 4 === 1) add(group, 't', { runAfter: future, priority: 9 });
        add(group, 't', { priority: g % 3 });
        add(group, 't');
        add(group, 'v', { priority: 50 });
        if (g % 2 === 0) add(group, 'u', { priority: (g % 3) + 1 });
      }
      await app.queue.enqueueGraph(nodes);
      for (const [types, max, exclude] of [
        [['t', 'u'], 20, null],
        [['t', 'u'], 3, null],
        [['t'], 1, null],
        [['u', 'v'], 20, null],
        [['t', 'u'], 20, ['g09', 'g02']],
      ] as Array<[string[], number, string[] | null]>) {
        const { locking, floors } = await both(types, max, exclude);
        expect(floors).toEqual(locking);
        expect(floors.ids.length).toBeGreaterThan(0);
      }
      // From a cursor in the middle, wrapping round to the first groups below the first one taken.
      await app.rows(`UPDATE job_queue_rotation SET group_key = 'g07', served = 1`);
      for (const max of [4, 9, 30]) {
        const { locking, floors } = await both(['t', 'u'], max);
        expect(floors).toEqual(locking);
        expect(floors.cursor).toEqual({ group: 'g07', served: 1 });
      }
      const all = await both(['t', 'u'], 30);
      expect(all.floors.groups[0]).toBe('g07');
      expect(all.floors.groups).toContain('g00');
      expect(all.floors.groups).not.toContain('g03');
      expect(all.floors.groups).not.toContain('g05');
    });

    it('group and type names are data: quotes, backslashes, SQL and emoji', async () => {
      const names = [`it's`, `back\\slash\\`, `'); DELETE FROM jobs; --`, `ünï😀`, `"double"`, ` `];
      await app.queue.enqueueGraph(names.flatMap((group, i) => [
        { ref: `a${i}`, type: 't', group, priority: i % 2 },
        { ref: `b${i}`, type: ODD_TYPE, group, priority: (i + 1) % 2 },
      ]));
      const { locking, floors } = await both(['t', ODD_TYPE], 20);
      expect(floors).toEqual(locking);
      expect(floors.groups.sort()).toEqual([...names].sort());
      // Each group's head is its higher-priority job: of the odd type in every other group.
      expect(await app.rows(`SELECT COUNT(*) AS n FROM jobs WHERE id IN (${floors.ids.join(',')}) AND type = ?`, [ODD_TYPE])).toEqual([{ n: String(names.length / 2) }]);
      expect(await app.count()).toBe(names.length * 2);
    });

    it('a head another transaction locked or claimed after the plain read is left out, never returned', async () => {
      await app.queue.enqueueGraph([0, 1, 2].flatMap((g) => [0, 1].map((k) => ({ ref: `${g}.${k}`, type: 't', group: `g${g}` }))));
      const ids = (await app.rows(`SELECT id, group_key FROM jobs ORDER BY id`)).map((r) => ({ id: Number(r.id), group: String(r.group_key) }));
      const head1 = ids.find((j) => j.group === 'g1')!.id;
      const holder = app.dataSource.createQueryRunner();
      try {
        await holder.query('START TRANSACTION');
        await holder.query('SELECT id FROM jobs WHERE id = ? FOR UPDATE', [head1]);
        // The all-locking walk takes g1's next row; the plain read saw g1's head, which its
        // locking read then skips: g1 gives nothing this time (another claim holds its head).
        const { locking, floors } = await both(['t'], 3);
        expect(locking.groups).toEqual(['g0', 'g1', 'g2']);
        expect(locking.ids).not.toContain(head1);
        expect(floors.groups).toEqual(['g0', 'g2']);
        expect(floors.ids).toEqual([locking.ids[0], locking.ids[2]]);
        // Claimed and committed by another transaction: the plain read no longer sees it ready.
        await holder.query(`UPDATE jobs SET state = 'running' WHERE id = ?`, [head1]);
        await holder.query('COMMIT');
        expect(await walk('job_queue_cursor_walk_floors', ['t'], 3, null)).toEqual(await walk('job_queue_cursor_walk', ['t'], 3, null));
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
        await holder.release();
      }
    });

    it('a claim walks with floors, except inside a finalize that made rows ready', async () => {
      await app.queue.enqueueGraph([0, 1, 2, 3].map((g) => ({ ref: `j${g}`, type: 't', group: `g${g}` })));
      const claims = app.module.get(ClaimService);
      const request: ClaimRequest = { owner: 'w', types: ['t'], quotas: [], rotation: 2, leaseTtlMs: 60_000, start: true };
      const texts: string[] = [];
      const original = app.db.transaction;
      app.db.transaction = <R>(body: (tx: SqlExecutor) => Promise<R>, options?: TransactionOptions): Promise<R> =>
        original.call(app.db, (tx: SqlExecutor) => body({ dialect: tx.dialect, run: (s) => (texts.push(s.render('mysql').text), tx.run(s)) }), options) as Promise<R>;
      try {
        expect((await claims.claim(request)).map((j) => j.group)).toEqual(['g0', 'g1']);
        expect(texts.filter((t) => t.startsWith('CALL'))).toEqual([expect.stringMatching(/^CALL job_queue_cursor_walk_floors\(/)]);
        texts.length = 0;
        const within = await app.db.transaction((tx) => claims.claimWithin(tx, request));
        expect(within.map((j) => j.group)).toEqual(['g2', 'g3']);
        expect(texts.filter((t) => t.startsWith('CALL'))).toEqual([expect.stringMatching(/^CALL job_queue_cursor_walk\(/)]);
      } finally {
        app.db.transaction = original;
      }
    });

    it('without the cursor row (a table emptied by hand), the jobs a rotation claim returns are leased', async () => {
      await app.queue.enqueueGraph([0, 1, 2, 3].map((g) => ({ ref: `j${g}`, type: 't', group: `g${g}` })));
      await app.rows(`DELETE FROM job_queue_rotation`);
      const claims = app.module.get(ClaimService);
      const got = await claims.claim({ owner: 'w', types: ['t'], quotas: [], rotation: 2, leaseTtlMs: 60_000, start: true });
      expect(got.map((j) => j.group)).toEqual(['g0', 'g1']);
      const rows = await app.rows(`SELECT id, state, lease_owner FROM jobs WHERE id IN (?, ?) ORDER BY id`, got.map((j) => j.id));
      expect(rows.map((r) => [r.state, r.lease_owner])).toEqual([['running', 'w'], ['running', 'w']]);
      // A second claim does not hand them out again.
      const next = await claims.claim({ owner: 'v', types: ['t'], quotas: [], rotation: 2, leaseTtlMs: 60_000, start: true });
      expect(next.map((j) => j.id).filter((id) => got.some((j) => j.id === id))).toEqual([]);
    });
  },
  ['mysql'],
);
