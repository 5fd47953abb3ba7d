import { chunked, sql, type Sql } from './sql';
import type { Row, SqlExecutor } from './sql-executor';

/**
 * `UPDATE jobs … RETURNING` where the database has it (PostgreSQL, SQLite); on MySQL/MariaDB a
 * locking read of the same rows in id order, then the UPDATE by id. The row locks make the two
 * equivalent. `returning` must list `id` and only columns the SET leaves unchanged, so both
 * forms return the same values. `where` must bind a bounded number of values.
 */
export async function updateReturning(tx: SqlExecutor, set: Sql, where: Sql, returning: Sql): Promise<Row[]> {
  if (tx.dialect.supportsReturning) {
    return (await tx.run(sql`UPDATE jobs SET ${set} WHERE ${where} RETURNING ${returning}`)).rows;
  }
  const { rows } = await tx.run(sql`SELECT ${returning} FROM jobs WHERE ${where} ORDER BY id FOR UPDATE`);
  // The locking read may match any number of rows (a cascade's dependents): update them by id in
  // bounded slices, still in id order, under the locks the read took.
  for (const chunk of chunked(rows)) await tx.run(sql`UPDATE jobs SET ${set} WHERE id IN (${sql.list(chunk.map((r) => r.id))})`);
  return rows;
}
