import type { JobQueueDatabase } from '../../lib/database/job-queue.database';
import { sql } from '../../lib/database/sql';

/**
 * Puts every job in the table where a sweep finds it, as if its worker were gone: `expired lease`
 * (the reclaim sweep's: worker dead-worker, lease expired a minute ago) or `overdue` (the timeout
 * sweep's: worker wedged-worker still renewing, started a minute ago with a 1 s timeout). Each on
 * attempt 1.
 */
export async function strandJobs(db: JobQueueDatabase, how: 'expired lease' | 'overdue'): Promise<void> {
  const d = db.dialect;
  const past = d.addMs(d.now(), -60_000);
  const future = d.addMs(d.now(), 600_000);
  await db.run(
    how === 'expired lease'
      ? sql`UPDATE jobs SET state = 'running', lease_owner = 'dead-worker', lease_expires = ${past}, started_at = ${past}, attempts = 1`
      : sql`UPDATE jobs SET state = 'running', lease_owner = 'wedged-worker', lease_expires = ${future}, started_at = ${past}, timeout_ms = 1000, attempts = 1`,
  );
}
