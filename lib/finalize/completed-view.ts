import { parseJson, toJobView, type JobRecord } from '../database/job-row';
import type { JobView } from '../job.types';

/**
 * The view of a job its complete just wrote, from the row as it was before that write (MySQL's
 * locking read: MySQL has no UPDATE … RETURNING) and the values the complete sets: `state`,
 * `progress`, `result`, and the database's time of the write as `finishedAt` and `updatedAt`.
 * Every other column of the view is one the complete leaves alone. The `SET` this mirrors is
 * `completedSet` in complete.sql.ts; change them together. (PostgreSQL and SQLite return the
 * rows as written.)
 */
export function completedView(before: JobRecord, resultJson: string, at: Date): JobView {
  return toJobView({ ...before, state: 'done', progress: 100, result: parseJson(resultJson), finishedAt: at, updatedAt: at });
}
