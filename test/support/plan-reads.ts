import type { Sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import type { QueueApp } from './queue-app';

/** A statement's plan as text (`prefix`: EXPLAIN, EXPLAIN (ANALYZE), EXPLAIN QUERY PLAN). */
export async function explainText(app: QueueApp, prefix: string, statement: Sql): Promise<string> {
  const { text, params } = statement.render(app.db.dialect.name);
  const rows: Record<string, unknown>[] = await app.dataSource.query(`${prefix} ${text}`, params);
  return rows.map((r) => Object.values(r).join(' ')).join('\n');
}

/** MySQL: index entries and rows the server read while `work` ran on one connection. */
export async function mysqlRowsRead<T>(app: QueueApp, work: (tx: SqlExecutor) => Promise<T>): Promise<{ result: T; read: number }> {
  const runner = app.dataSource.createQueryRunner();
  const counted = async () => {
    const rows: Array<{ Value: string }> = await runner.query(`SHOW SESSION STATUS LIKE 'Handler_read%'`);
    return rows.reduce((n, r) => n + Number(r.Value), 0);
  };
  try {
    const before = await counted();
    const result = await work(app.db.executorFor(runner.manager));
    return { result, read: (await counted()) - before };
  } finally {
    await runner.release();
  }
}
