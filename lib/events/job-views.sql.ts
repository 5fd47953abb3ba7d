import { inChunks } from '../database/in-chunks';
import { jobColumns, toJobRecord, toJobView } from '../database/job-row';
import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { JobView } from '../job.types';

/**
 * The views of these jobs as they are now (deleted ones are simply absent), and the characters
 * of JSON (args and results) they were read from: what the views weigh, roughly.
 */
export async function readJobViews(db: SqlExecutor, ids: readonly number[]): Promise<{ views: Map<number, JobView>; jsonChars: number }> {
  const rows = await inChunks(db, ids, (list) => sql`SELECT ${jobColumns(db.dialect)} FROM jobs WHERE id IN (${list})`);
  const views = new Map<number, JobView>();
  let jsonChars = 0;
  for (const row of rows) {
    if (typeof row.args === 'string') jsonChars += row.args.length;
    if (typeof row.result === 'string') jsonChars += row.result.length;
    const view = toJobView(toJobRecord(row, db.dialect));
    views.set(view.id, view);
  }
  return { views, jsonChars };
}

/**
 * The type and group of these jobs, deleted ones absent: what a sink that counts by type needs
 * of a job reported without them, without its args and result.
 */
export async function readJobTypes(db: SqlExecutor, ids: readonly number[]): Promise<Map<number, { type: string; group: string }>> {
  const rows = await inChunks(db, ids, (list) => sql`SELECT id, type, group_key FROM jobs WHERE id IN (${list})`);
  const types = new Map<number, { type: string; group: string }>();
  for (const row of rows) types.set(Number(row.id), { type: String(row.type), group: String(row.group_key) });
  return types;
}
