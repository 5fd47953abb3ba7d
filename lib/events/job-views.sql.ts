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
