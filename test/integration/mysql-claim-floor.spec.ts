import { ClaimService, type ClaimRequest } from '../../lib';
import { claimCandidatesStatement } from '../../lib/claim/claim-candidates.sql';
import { readyFloorsStatement, toReadyFloors } from '../../lib/claim/ready-by-type.sql';
import type { TransactionOptions } from '../../lib/database/job-queue.database';
import type { Sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { describeDialects } from '../support/describe-dialects';
import { withHeldSnapshot } from '../support/held-snapshot';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

const JOBS = 3_000;
const CLAIMED = 2_500;

/**
 * MariaDB leaves a claimed row's old ready-index entry in place, delete-marked, until purge, and
 * purge waits for every older snapshot. A locking read from the front of the ready stretch walked
 * all of them, checking each for a lock through the clustered index: with a snapshot held open (a
 * backup, a long report) every claim cost more than the one before. The claim now reads each
 * type's first ready row without locks and locks from there (readyFloorsStatement).
 */
describeDialects(
  'MySQL claims from the first ready row, past the entries of claimed rows',
  (db) => {
    let app: QueueApp;
    let claims: ClaimService;
    const request = (types: string[], limit = 10): ClaimRequest => ({ owner: 'w', types, quotas: [{ limit }], leaseTtlMs: 60_000, start: true });

    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['t', 'u', 'v'] });
      claims = app.module.get(ClaimService);
    });
    afterAll(() => app.close());
    beforeEach(() => resetTables(app));

    /** The statements the queue ran in its transactions during `work`, as sent. */
    async function statementsOf<T>(work: () => Promise<T>): Promise<{ result: T; texts: string[] }> {
      const texts: string[] = [];
      const db = app.db;
      const original = db.transaction;
      db.transaction = <R>(body: (tx: SqlExecutor) => Promise<R>, options?: TransactionOptions): Promise<R> =>
        original.call(db, (tx: SqlExecutor) => body({ dialect: tx.dialect, run: (s) => (texts.push(s.render('mysql').text), tx.run(s)) }), options) as Promise<R>;
      try {
        return { result: await work(), texts };
      } finally {
        db.transaction = original;
      }
    }

    /** Pages InnoDB touched for one statement (MariaDB's ANALYZE runs it), inside a transaction rolled back. */
    async function pagesAccessed(statement: Sql): Promise<number> {
      const runner = app.dataSource.createQueryRunner();
      try {
        await runner.query('START TRANSACTION');
        const { text, params } = statement.render('mysql');
        const [row] = await runner.query(`ANALYZE FORMAT=JSON ${text}`, params);
        const plan = String(Object.values(row as Record<string, unknown>)[0]);
        return [...plan.matchAll(/"pages_accessed": (\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
      } finally {
        await runner.query('ROLLBACK');
        await runner.release();
      }
    }

    /**
     * The fewest pages of up to 20 readings, 250 ms apart (it stops at the first under 100). A
     * read-write transaction of another spec on the same server, open since before our claims,
     * makes InnoDB check every index entry on the pages they changed in the clustered index,
     * whatever the statement: 734 and 3,186 pages beside large-graphs and paused-groups-scale.
     */
    async function fewestPages(statement: Sql): Promise<number> {
      let fewest = Infinity;
      for (let reading = 0; reading < 20 && fewest >= 100; reading++) {
        if (reading) await new Promise((r) => setTimeout(r, 250));
        fewest = Math.min(fewest, await pagesAccessed(statement));
      }
      return fewest;
    }

    it('with a snapshot held open, a claim touches the same few pages after thousands of claimed jobs', async () => {
      await withHeldSnapshot(db, async () => {
        for (let i = 0; i < JOBS; i += 1_000) {
          await app.queue.enqueueGraph(Array.from({ length: 1_000 }, (_, k) => ({ ref: `j${i + k}`, type: 't' })));
        }
        let claimed = 0;
        let expectedNext = Number((await app.rows(`SELECT MIN(id) AS id FROM jobs`))[0].id);
        while (claimed < CLAIMED) {
          const got = await claims.claim(request(['t']));
          // Still the oldest ready rows, in order.
          expect(got.map((j) => j.id)).toEqual(Array.from({ length: 10 }, (_, k) => expectedNext + k));
          expectedNext += 10;
          claimed += got.length;
        }

        const floors = toReadyFloors((await app.db.run(readyFloorsStatement(app.db.dialect, ['t'], {}))).rows);
        expect(floors.get('t')?.id).toBe(expectedNext);
        const fromFront = await pagesAccessed(claimCandidatesStatement(app.db.dialect, ['t'], { limit: 10 }));
        const fromFloor = await fewestPages(claimCandidatesStatement(app.db.dialect, ['t'], { limit: 10 }, undefined, false, floors));
        const floorRead = await fewestPages(readyFloorsStatement(app.db.dialect, ['t'], {}));
        // The front walk passes 2,500 delete-marked entries, each looked up in the clustered
        // index (measured: ~2.7 pages per entry); the floor's own read steps over them on the
        // index's leaf pages; the locking read from the floor reads only its 10 rows.
        expect(fromFront).toBeGreaterThan(CLAIMED);
        expect(floorRead).toBeLessThan(100);
        expect(fromFloor).toBeLessThan(100);
      });
    });

    it('a row made ready before the floor, a higher priority, a type with nothing ready, a claim inside a finalize: all as before', async () => {
      await app.queue.enqueueGraph(Array.from({ length: 30 }, (_, k) => ({ ref: `j${k}`, type: 't' })));
      const first = await claims.claim(request(['t', 'u']));
      expect(first.map((j) => j.type)).toEqual(Array(10).fill('t'));
      // A claimed row put back to ready (as a lease sweep does) sits before every floor read so far.
      const back = first[3].id;
      await app.rows(`UPDATE jobs SET state = 'ready', lease_owner = NULL, lease_expires = NULL WHERE id = ?`, [back]);
      const { id: urgent } = await app.queue.enqueue({ type: 'u', priority: 5 });
      const statements = await statementsOf(() => claims.claim(request(['t', 'u', 'v'], 3)));
      expect(statements.result.map((j) => j.id)).toEqual([urgent, back, first[9].id + 1]);
      // The floors' read, without locks, then the locking read from each floor, of the two types that have one.
      expect(statements.texts[0]).not.toMatch(/FOR UPDATE/);
      expect(statements.texts[1]).toMatch(/FOR UPDATE SKIP LOCKED/);
      expect(statements.texts[1].match(/\(run_after > \? OR \(run_after = \? AND id >= \?\)\)/g)).toHaveLength(2);
      // Inside a finalize's transaction: floors only where it wrote no ready row (a chain link's
      // promotion put the next link in the ready index; a consistent read after that was dearer
      // than the walk it saves).
      const within = (readFloors?: boolean) =>
        statementsOf(() => app.db.transaction((tx) => claims.claimWithin(tx, request(['t'], 1), readFloors)));
      const promoted = await within();
      expect(promoted.texts).toHaveLength(2); // the locking read from the front, the lease
      expect(promoted.texts[0]).toMatch(/FOR UPDATE SKIP LOCKED/);
      expect(promoted.texts[0]).not.toMatch(/run_after > \?/);
      const quiet = await within(true);
      expect(quiet.texts).toHaveLength(3);
      expect(quiet.texts[1]).toMatch(/run_after > \?/);
      expect(quiet.result[0].id).toBe(promoted.result[0].id + 1);
      // Nothing ready for any type: no locking read, nothing claimed.
      await app.rows(`UPDATE jobs SET state = 'done' WHERE state = 'ready'`);
      expect(await claims.claim(request(['t', 'u', 'v']))).toEqual([]);
    });
  },
  ['mysql'],
);
