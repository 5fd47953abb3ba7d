import { swapText } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { CLAIM_SQL_V21 } from './1767700000001-job-queue-ready-by-type';

/**
 * The claim's two sources are appended instead of merged: `UNION` removed duplicate ids with a
 * hash aggregate that the generic plan sized for its estimate of the ready rows (3 MB of buckets
 * at 100,000 ready jobs), cleared and walked on every call however few rows it held: at the
 * default batch of 10 that was a third of the claim's database time (0.58 → 0.39 ms per call).
 * An id both sources return (the any-group probe does not skip rows this statement itself locked)
 * joins the UPDATE twice; PostgreSQL updates a row once per statement and ignores the second
 * join row, so the claim still leases and returns each job once.
 */
export const CLAIM_SQL_V23 = swapText(
  23,
  CLAIM_SQL_V21,
  'picked AS (SELECT id FROM grouped UNION SELECT id FROM any_group)',
  'picked AS (SELECT id FROM grouped UNION ALL SELECT id FROM any_group)',
);

export class JobQueueClaimUnionAllPostgres1767900000001 extends JobQueueMigration {
  readonly version = 23;
  readonly name = 'JobQueueClaimUnionAll1767900000001';
  protected readonly upSql = [CLAIM_SQL_V23];
  protected readonly downSql = [CLAIM_SQL_V21];
}
