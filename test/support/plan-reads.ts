import type { JobFilter } from '../../lib';
import type { Sql } from '../../lib/database/sql';
import type { SqlExecutor } from '../../lib/database/sql-executor';
import { normalizeFilter } from '../../lib/query/job-filter';
import { readPage } from '../../lib/query/read-page';
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

/**
 * One find page of `size` below `before` (null: the first) and the rows the server read for it:
 * EXPLAIN ANALYZE of each statement on PostgreSQL, Handler_read on MySQL, none counted on SQLite.
 */
export async function findPageReads(app: QueueApp, filter: JobFilter, before: number | null, size: number): Promise<{ ids: number[]; next: number | null; read: number }> {
  const f = normalizeFilter(filter);
  if (app.db.dialect.name === 'mysql') {
    const { result, read } = await mysqlRowsRead(app, (tx) => readPage(tx, f, before, size));
    return { ids: result.rows.map((r) => Number(r.id)), next: result.nextBefore, read };
  }
  const statements: Sql[] = [];
  const recorder = { dialect: app.db.dialect, run: (s: Sql) => (statements.push(s), app.db.run(s)) };
  const page = await readPage(recorder, f, before, size);
  let read = 0;
  for (const s of app.db.dialect.name === 'postgres' ? statements : []) read += await pgStatementRowsScanned(app, s);
  return { ids: page.rows.map((r) => Number(r.id)), next: page.nextBefore, read };
}
