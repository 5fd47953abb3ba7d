import { inChunks } from '../database/in-chunks';
import { jobColumns, toJobRecord, toJobView } from '../database/job-row';
import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { JobView } from '../job.types';

/** The views of these jobs as they are now (deleted ones are simply absent). */
export async function readJobViews(db: SqlExecutor, ids: readonly number[]): Promise<Map<number, JobView>> {
  const rows = await inChunks(db, ids, (list) => sql`SELECT ${jobColumns(db.dialect)} FROM jobs WHERE id IN (${list})`);
  const views = new Map<number, JobView>();
  for (const row of rows) {
    const view = toJobView(toJobRecord(row, db.dialect));
    views.set(view.id, view);
  }
  return views;
}
