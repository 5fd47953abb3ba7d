import { sql } from './sql';
import type { SqlExecutor } from './sql-executor';

/** The database's clock, as a Date (every timestamp the queue compares comes from it). */
export async function databaseNow(db: SqlExecutor): Promise<Date> {
  const now = db.dialect.name === 'mysql' ? sql`CAST(UTC_TIMESTAMP(3) AS CHAR)` : db.dialect.now();
  const { rows } = await db.run(sql`SELECT ${now} AS now`);
  return db.dialect.parseTime(rows[0].now)!;
}
