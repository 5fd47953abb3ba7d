import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';

/** The cheapest statement the database must answer: whether it answers at all. */
export async function pingDatabase(db: SqlExecutor): Promise<void> {
  await db.run(sql`SELECT 1 AS ok`);
}
