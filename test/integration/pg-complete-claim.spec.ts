import { ClaimService } from '../../lib/claim/claim.service';
import type { ClaimRequest } from '../../lib/claim/claim-request';
import { postgresClaimInTransaction, postgresClaimStatement } from '../../lib/claim/postgres.claim';
import { PgArrayLiteral } from '../../lib/database/pg-array-literal';
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

    it('takes group weights as array literals built once, which PostgreSQL reads back as the arrays', async () => {
      const names = ['acme', 'b c', 'd,e', 'f"g', 'h\\i', 'NULL', '{}', 'zürich 😀', ''];
      const { rows } = await app.db.run(sql`SELECT ${PgArrayLiteral.ofText(names)}::text[] AS n, ${PgArrayLiteral.ofInt([3, 1, 20])}::int[] AS w`);
      expect([rows[0].n, rows[0].w]).toEqual([names, [3, 1, 20]]);
    });

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
        false,
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
        completeThenClaimPostgres('w1', [{ id: ids.a, resultJson: 'null', parentId: null }], true, claims.oneCall(request('w1'))!, false),
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].id).toBeNull();
      expect(await app.queue.get(ids.a)).toMatchObject({ state: 'done' });
    });

    it('ends with the rotation claim when the request fills slots by rotation, and returns trace_context only for a traced claim', async () => {
      const ids = await app.queue.enqueueGraph([
        { ref: 'a', type: 't' },
        { ref: 'b', type: 't', group: 'g1', dependsOn: ['a'] },
        { ref: 'c', type: 't', group: 'g2', dependsOn: ['a'] },
      ]);
      await app.rows(`UPDATE jobs SET trace_context = 'stored' WHERE id = ANY($1)`, [[ids.b, ids.c]]);
      await runningBy('w1', [ids.a]);
      const rotation: ClaimRequest = { owner: 'w1', types: ['t'], quotas: [], rotation: 2, leaseTtlMs: 60_000, start: true, withTrace: true };
      const { rows } = await app.db.transaction(async (tx) => tx.run(completeThenClaimPostgres('w1', [{ id: ids.a, resultJson: 'null', parentId: null }], true, claims.oneCall(rotation)!, true)));
      // Both promoted, one per group by the rotation, each with its stored trace context.
      expect(rows.map((r) => [Number(r.id), r.group_key, r.trace_context]).sort()).toEqual([[ids.b, 'g1', 'stored'], [ids.c, 'g2', 'stored']].sort());
      expect((await app.rows(`SELECT count(*) AS n FROM jobs WHERE lease_owner = 'w1' AND state = 'running'`))[0].n).toBe('2');

      // Untraced: the column comes back NULL, whatever the row holds.
      await resetTables(app);
      const more = await app.queue.enqueueGraph([{ ref: 'a', type: 't' }, { ref: 'b', type: 't', dependsOn: ['a'] }]);
      await app.rows(`UPDATE jobs SET trace_context = 'stored' WHERE id = $1`, [more.b]);
      await runningBy('w1', [more.a]);
      const plain = await app.db.run(completeThenClaimPostgres('w1', [{ id: more.a, resultJson: 'null', parentId: null }], true, claims.oneCall(request('w1'))!, false));
      expect(plain.rows.map((r) => [Number(r.id), r.trace_context])).toEqual([[more.b, null]]);
    });

    it('a complete and a claim of two different owners are refused before any write', () => {
      expect(() => completeThenClaimPostgres('w1', [{ id: 1, resultJson: 'null', parentId: null }], true, claims.oneCall(request('w2'))!, false)).toThrow(/w1 cannot end with a claim by w2/);
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
        await tx.run(postgresClaimStatement(request('w1'))!);
        return (await tx.run(sql`SELECT current_setting('synchronous_commit') AS sync`)).rows[0].sync;
      });
      expect(alone).toBe('off');
    });
  },
  ['postgres'],
);
