import { sql, type Sql } from '../../lib/database/sql';
import type { QueueApp } from './queue-app';

/** 1..n (n <= 100,000) as a row source with column `i`, on every dialect (MariaDB's seq_ tables are not MySQL's). */
export function numbers(app: QueueApp, n: number): Sql {
  if (app.db.dialect.name === 'postgres') return sql`generate_series(1, ${sql.raw(String(n))}) AS s (i)`;
  const digit = `(SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)`;
  const from = [0, 1, 2, 3, 4].map((k) => `${digit} d${k}`).join(' CROSS JOIN ');
  return sql`${sql.raw(`(SELECT d0.d + 10 * d1.d + 100 * d2.d + 1000 * d3.d + 10000 * d4.d + 1 AS i FROM ${from}) s WHERE s.i <= ${n}`)}`;
}

/** `n` (at most 100,000) paused groups `tenant-1`… (or `${prefix}1`…), written straight into the table as by hand. */
export async function insertPausedGroups(app: QueueApp, n: number, prefix = 'tenant-'): Promise<void> {
  const name = app.db.dialect.name === 'mysql' ? sql`CONCAT(${prefix}, i)` : sql`${prefix} || i`;
  await app.db.run(sql`INSERT INTO job_queue_paused (kind, name, paused_at) SELECT 'group', ${name}, ${app.db.dialect.now()} FROM ${numbers(app, n)}`);
}
