import { swapText } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { NULLS } from './1767500000002-job-queue-complete-views';
import { COMPLETE_SQL_V22, COMPLETE_TRACED_SQL_V22, COMPLETE_VIEWS_SQL_V22, DEP_IN_ID_ORDER } from './1767800000001-job-queue-promotion-order';

const swap = (text: string, from: string, to: string): string => swapText(24, text, from, to);

/**
 * A done job with more than 2,000 dependents (lib/finalize/promotion-slices.sql.ts's
 * PROMOTION_SLICE when this was written) gets a cursor instead of its countdown; the others are
 * counted down as before. `raw` reads each done job's dependents once, at most 2,001 of them, in
 * the one index probe per job the countdown always made: the count and the cursor decision come
 * from the same rows.
 */
const SLICED_DEP = `raw AS MATERIALIZED (
        SELECT done.id AS up_id, s.job_id FROM done
        CROSS JOIN LATERAL (SELECT d.job_id FROM job_deps d WHERE d.depends_on_id = done.id LIMIT 2001) s),
      many AS MATERIALIZED (
        SELECT raw.up_id FROM raw GROUP BY raw.up_id HAVING COUNT(*) > 2000),
      sliced AS (
        INSERT INTO job_queue_promotions (job_id, after_job_id) SELECT many.up_id, 0 FROM many
        RETURNING job_queue_promotions.job_id),
      dep AS MATERIALIZED (
        SELECT raw.job_id, COUNT(*) AS n FROM raw WHERE NOT EXISTS (SELECT 1 FROM many WHERE many.up_id = raw.up_id)
        GROUP BY raw.job_id ORDER BY raw.job_id),`;

const PROMOTED_ROW = `UNION ALL SELECT 'promoted'::text, COUNT(*) FROM promoted WHERE state = 'ready'`;
const PROMOTED_VIEW_ROW = `UNION ALL SELECT 'promoted'::text, COUNT(*), ${NULLS} FROM promoted p WHERE p.state = 'ready'`;

/** A complete that opens cursors, and says how many in a 'sliced' row. */
function sliced(text: string, promotedRow: string, slicedRow: string): string {
  return swap(swap(text, DEP_IN_ID_ORDER, SLICED_DEP), promotedRow, `${promotedRow}\n      ${slicedRow}`);
}

export const COMPLETE_SQL_V24 = sliced(COMPLETE_SQL_V22, PROMOTED_ROW, `UNION ALL SELECT 'sliced'::text, COUNT(*) FROM sliced`);
export const COMPLETE_TRACED_SQL_V24 = sliced(COMPLETE_TRACED_SQL_V22, PROMOTED_ROW, `UNION ALL SELECT 'sliced'::text, COUNT(*) FROM sliced`);
export const COMPLETE_VIEWS_SQL_V24 = sliced(COMPLETE_VIEWS_SQL_V22, PROMOTED_VIEW_ROW, `UNION ALL SELECT 'sliced'::text, COUNT(*), ${NULLS} FROM sliced`);

/**
 * Huge promotions in slices, as SQLite has done since its migration 10 (lib/finalize/sliced-promotions.ts).
 * The root of a 1 → 100,000 fan-out counted down every dependent in its own complete: 1.8 s in
 * one transaction, with 100,000 row locks held, before the first dependent could start. Now its
 * complete opens a cursor, and the slices of 2,000 (one transaction each, ~40 ms) run after the
 * commit while the workers already drain what the first slices readied.
 *
 * A slice reads the next dependents of its job by id, so `job_deps_depends_on_idx` becomes
 * (depends_on_id, job_id): the same lookups as before, and a slice's range without a sort. On a
 * large table, build it first without blocking writes, and this migration then only swaps names:
 *   CREATE INDEX CONCURRENTLY job_deps_depends_on_job_idx ON job_deps (depends_on_id, job_id);
 */
export class JobQueuePromotionSlicesPostgres1767900000002 extends JobQueueMigration {
  readonly version = 24;
  readonly name = 'JobQueuePromotionSlices1767900000002';
  protected readonly upSql = [
    `CREATE TABLE job_queue_promotions (job_id bigint PRIMARY KEY, after_job_id bigint NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS job_deps_depends_on_job_idx ON job_deps (depends_on_id, job_id)`,
    `DROP INDEX job_deps_depends_on_idx`,
    `ALTER INDEX job_deps_depends_on_job_idx RENAME TO job_deps_depends_on_idx`,
    COMPLETE_SQL_V24,
    COMPLETE_TRACED_SQL_V24,
    COMPLETE_VIEWS_SQL_V24,
  ];
  protected readonly downSql = [
    COMPLETE_SQL_V22,
    COMPLETE_TRACED_SQL_V22,
    COMPLETE_VIEWS_SQL_V22,
    `CREATE INDEX job_deps_depends_on_only_idx ON job_deps (depends_on_id)`,
    `DROP INDEX job_deps_depends_on_idx`,
    `ALTER INDEX job_deps_depends_on_only_idx RENAME TO job_deps_depends_on_idx`,
    `DROP TABLE job_queue_promotions`,
  ];
}
