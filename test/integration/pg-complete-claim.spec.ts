import { ClaimService } from '../../lib/claim/claim.service';
import type { ClaimRequest } from '../../lib/claim/claim-request';
import { claimedColumns, PG_CLAIMED_COLUMNS } from '../../lib/claim/claimed-job';
import { postgresClaimInTransaction } from '../../lib/claim/postgres.claim';
import { sql } from '../../lib/database/sql';
import { completeThenClaimPostgres } from '../../lib/finalize/complete.sql';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

/**
 * PostgreSQL's one-statement complete that ends with the worker's claim (completeThenClaimPostgres):
 * the claim sees the complete's promotions, the guard's refusals still come back, and the claim
 * functions' asynchronous commit does not extend to the complete.
 */
describeDialects(
  'PostgreSQL: a complete that ends with the claim, in one statement',
  (db) => {
    let app: QueueApp;
    let claims: ClaimService;
    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
      claims = app.module.get(ClaimService);
    });
    afterAll(() => app?.close());
    beforeEach(() => resetTables(app));

    const request = (owner: string): ClaimRequest => ({ owner, types: ['t'], quotas: [{ limit: 10 }], leaseTtlMs: 60_000, start: true });

    async function runningBy(owner: string, ids: number[]): Promise<void> {
      await app.rows(`UPDATE jobs SET state = 'running', lease_owner = $1, lease_expires = now() + interval '1 minute', attempts = 1 WHERE id = ANY($2)`, [owner, ids]);
    }

    it('claims the dependent its complete promoted, reports a refused job, and leaves the commit durable', async () => {
      const ids = await app.queue.enqueueGraph([
        { ref: 'a', type: 't' },
        { ref: 'b', type: 't', dependsOn: ['a'] },
        { ref: 'other', type: 't' },
      ]);
      await runningBy('w1', [ids.a]);
      await runningBy('w2', [ids.other]); // not w1's: the guard refuses it
      const statement = completeThenClaimPostgres(
        'w1',
        [
          { id: ids.a, resultJson: '1', parentId: null },
          { id: ids.other, resultJson: '2', parentId: null },
        ],
        true,
        claims.oneCall(request('w1'))!,
        claimedColumns(request('w1'), PG_CLAIMED_COLUMNS),
      );
      const { rows, sync } = await app.db.transaction(async (tx) => {
        const result = await tx.run(statement);
        const setting = await tx.run(sql`SELECT current_setting('synchronous_commit') AS sync`);
        return { rows: result.rows, sync: setting.rows[0].sync };
      });
      expect(sync).toBe('on');
      const kinds = (rows[0].done_kinds as string[]).map((k, i) => [k, Number((rows[0].done_jobs as unknown[])[i])]);
      expect(kinds).toEqual(expect.arrayContaining([['refused', ids.other], ['promoted', 1]]));
      // b became ready in this statement and was claimed by it, and only b.
      expect(rows.map((r) => Number(r.id))).toEqual([ids.b]);
      expect(await app.queue.get(ids.a)).toMatchObject({ state: 'done', result: 1 });
      expect(await app.queue.get(ids.b)).toMatchObject({ state: 'running', attempts: 1 });
      expect(await app.queue.get(ids.other)).toMatchObject({ state: 'running' });
      expect((await app.rows(`SELECT lease_owner FROM jobs WHERE id = $1`, [ids.b]))[0].lease_owner).toBe('w1');
    });

    it('claims nothing and still completes when nothing is ready, with one row of NULL claim columns', async () => {
      const ids = await app.queue.enqueueGraph([{ ref: 'a', type: 't' }]);
      await runningBy('w1', [ids.a]);
      const { rows } = await app.db.run(
        completeThenClaimPostgres('w1', [{ id: ids.a, resultJson: 'null', parentId: null }], true, claims.oneCall(request('w1'))!, claimedColumns(request('w1'), PG_CLAIMED_COLUMNS)),
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].id).toBeNull();
      expect(await app.queue.get(ids.a)).toMatchObject({ state: 'done' });
    });

    it('a claim inside a finalize transaction puts the durable commit back', async () => {
      await app.queue.enqueue({ type: 't' });
      const { claimed, sync } = await app.db.transaction(async (tx) => {
        const result = await tx.run(postgresClaimInTransaction(request('w1'))!);
        const setting = await tx.run(sql`SELECT current_setting('synchronous_commit') AS sync`);
        return { claimed: result.rows.length, sync: setting.rows[0].sync };
      });
      expect(claimed).toBe(1);
      expect(sync).toBe('on');
      // The claim alone keeps its asynchronous commit.
      await app.queue.enqueue({ type: 't' });
      const alone = await app.db.transaction(async (tx) => {
        await tx.run(sql`SELECT * FROM ${claims.oneCall(request('w1'))!}`);
        return (await tx.run(sql`SELECT current_setting('synchronous_commit') AS sync`)).rows[0].sync;
      });
      expect(alone).toBe('off');
    });
  },
  ['postgres'],
);
