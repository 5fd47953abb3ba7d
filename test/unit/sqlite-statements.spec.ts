import Database from 'better-sqlite3';
import type { Logger } from 'typeorm';
import { sql } from '../../lib/database/sql';
import { SQLITE_TEXT_KEPT, SqliteStatements, type SqliteHandle } from '../../lib/database/sqlite-statements';

const quiet = { logQuery: () => undefined, logQueryError: () => undefined } as unknown as Logger;

/** A real in-memory SQLite handle that counts what it compiles. */
function counted(): { handle: SqliteHandle; prepared: string[] } {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (a INTEGER, b TEXT)');
  const prepared: string[] = [];
  return { handle: { prepare: (text: string) => (prepared.push(text), db.prepare(text)) }, prepared };
}

/** A multi-row insert of `rows` rows: 2 + 3 × rows shape keys, so long past 84 rows. */
const insert = (rows: number) => sql`INSERT INTO t (a, b) VALUES ${sql.join(Array.from({ length: rows }, (_, i) => sql`(${i}, ${'x'})`))}`;

describe('SqliteStatements', () => {
  it('bounds the text of long statements kept, least recently used dropped first', () => {
    const { handle, prepared } = counted();
    const statements = new SqliteStatements(handle, quiet);
    // About 230 characters a row: 15 million characters of SQL over the sizes below.
    const wide = (rows: number) => sql`INSERT INTO t (a, b) VALUES ${sql.join(Array.from({ length: rows }, (_, i) => sql`(${i}, /* ${sql.raw('-'.repeat(200))} */ ${'x'})`))}`;
    statements.run(wide(150));
    for (let rows = 100; rows < 400; rows++) {
      statements.run(wide(rows));
      if (rows % 10 === 0) statements.run(wide(150)); // used often: stays
      expect(statements.counts.textChars).toBeLessThanOrEqual(SQLITE_TEXT_KEPT);
    }
    expect(prepared.filter((t) => t === wide(150).render('sqlite').text)).toHaveLength(1);
    expect(statements.counts.textChars).toBeGreaterThan(SQLITE_TEXT_KEPT * 0.9); // it did drop some
    expect(statements.counts.texts).toBeLessThan(100);
  });

  it('grows no trie branch for a statement too long to be found by its shape', () => {
    const { handle } = counted();
    const statements = new SqliteStatements(handle, quiet);
    for (let rows = 100; rows < 400; rows++) statements.run(insert(rows));
    expect(statements.counts).toMatchObject({ shapes: 0, shapeNodes: 0 });
    statements.run(insert(2));
    statements.run(insert(2));
    expect(statements.counts).toMatchObject({ shapes: 1, shapeNodes: 8 }); // the insert's strings, the join's, 2 × (row strings, 2 parameters)
  });

  it('finds a short statement by its shape, and starts over past its bounds', () => {
    const { handle, prepared } = counted();
    const statements = new SqliteStatements(handle, quiet);
    const byId = (id: number) => sql`SELECT b FROM t WHERE a = ${id}`;
    statements.run(byId(1));
    statements.run(byId(2));
    expect(prepared).toHaveLength(1);
    for (let n = 1; n <= 1_200; n++) statements.run(sql`SELECT b FROM t WHERE a IN (${sql.list(Array.from({ length: n % 80 || 1 }, () => n))}) LIMIT ${sql.raw(String(n))}`);
    expect(statements.counts.shapes).toBeLessThanOrEqual(1_000);
    expect(statements.counts.shapeChars).toBeLessThanOrEqual(SQLITE_TEXT_KEPT + 1_000);
    expect(statements.run(byId(3)).rows).toEqual([]); // still answers after starting over
  });
});
