import { jest } from '@jest/globals';
import { isUniqueViolation } from '../../lib/database/db-errors';
import { sql } from '../../lib/database/sql';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

/**
 * SQLite runs the queue's statements on better-sqlite3 directly, finding each prepared statement
 * by its shape (lib/database/sqlite-statements.ts). The cache must never hand back a statement of
 * another text, whatever the number of shapes, their length or the errors on the way.
 */
describeDialects(
  'the queue\'s statement cache on SQLite',
  (db) => {
    let app: QueueApp;
    let ids: number[];

    beforeAll(async () => {
      app = await startQueueApp(db, { worker: false, externalTypes: ['t'] });
      const refs = await app.queue.enqueueGraph(Array.from({ length: 3_000 }, (_, i) => ({ ref: `j${i}`, type: 't', args: { i } })));
      ids = Object.values(refs);
    }, 60_000);
    afterAll(() => app?.close());

    const countIn = async (list: number[]) => Number((await app.db.run(sql`SELECT COUNT(*) AS n FROM jobs WHERE id IN (${sql.list(list)})`)).rows[0].n);

    it('answers every shape right past the number of statements it keeps, and again after starting over', async () => {
      // 1,500 list lengths: 1,500 shapes, past the 1,000 statements kept; the long ones go by text.
      for (const round of [1, 2]) {
        for (let n = 1; n <= 1_500; n++) expect([round, n, await countIn(ids.slice(0, n))]).toEqual([round, n, n]);
      }
    }, 60_000);

    it('tells apart the shapes of one template with parameters and fragments in different places', async () => {
      const pick = (a: unknown, b: unknown) => sql`SELECT ${a} AS a, ${b} AS b`;
      const fragment = sql`(SELECT COUNT(*) FROM jobs)`;
      expect((await app.db.run(pick(1, fragment))).rows).toEqual([{ a: 1, b: 3_000 }]);
      expect((await app.db.run(pick(fragment, 1))).rows).toEqual([{ a: 3_000, b: 1 }]);
      expect((await app.db.run(pick(sql.raw('7'), 'x'))).rows).toEqual([{ a: 7, b: 'x' }]);
      expect((await app.db.run(pick(true, false))).rows).toEqual([{ a: 1, b: 0 }]); // booleans bound as 1 and 0
    });

    it('keeps the driver\'s error and rolls the transaction back', async () => {
      const before = await app.count();
      const insert = (key: string) =>
        sql`INSERT INTO jobs (type, args, state, job_key, group_key, weight, priority, run_after, attempts, max_attempts, created_at, updated_at)
          VALUES ('t', '{}', 'done', ${key}, 'g', 1, 0, ${app.db.dialect.now()}, 1, 1, ${app.db.dialect.now()}, ${app.db.dialect.now()})`;
      await app.db.run(insert('k1'));
      const err = await app.db
        .transaction(async (tx) => {
          await tx.run(insert('k2'));
          await tx.run(insert('k1'));
        })
        .catch((e: unknown) => e);
      expect(isUniqueViolation(err)).toBe(true);
      expect(await app.count()).toBe(before + 1);
      // The connection is usable afterwards, its transaction ended.
      await app.db.transaction((tx) => tx.run(insert('k2')));
      expect(await app.count()).toBe(before + 2);
    });

    it('reports SQL that SQLite refuses to prepare through the DataSource\'s logger, and goes on', async () => {
      const logged = jest.spyOn(app.dataSource.logger, 'logQueryError');
      try {
        const err = (await app.db.run(sql`SELEC ${1}`).catch((e: unknown) => e)) as { code?: string };
        expect(err.code).toBe('SQLITE_ERROR');
        expect(logged).toHaveBeenCalledWith(err, 'SELEC ?', []);
      } finally {
        logged.mockRestore();
      }
      expect((await app.db.run(sql`SELECT ${2} AS n`)).rows).toEqual([{ n: 2 }]);
    });
  },
  ['sqlite'],
);
