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

interface PgPlanNode {
  'Node Type': string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PgPlanNode[];
}

/** PostgreSQL: rows a plan's table and index scans produced or filtered out (its EXPLAIN (ANALYZE, FORMAT JSON) `Plan`). */
export function pgRowsScanned(node: PgPlanNode): number {
  const own =
    /Scan/.test(node['Node Type']) && node['Node Type'] !== 'Bitmap Index Scan'
      ? node['Actual Rows'] * node['Actual Loops'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)
      : 0;
  return own + (node.Plans ?? []).reduce((n, p) => n + pgRowsScanned(p), 0);
}

/** PostgreSQL: rows `statement`'s scans read, by EXPLAIN ANALYZE (which runs it). */
export async function pgStatementRowsScanned(app: QueueApp, statement: Sql): Promise<number> {
  const { text, params } = statement.render('postgres');
  const [row] = await app.dataSource.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, params);
  return pgRowsScanned(row['QUERY PLAN'][0].Plan);
}
