import { swapText } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { COMPLETE_SQL_V13 } from './1766000000002-job-queue-settled-in-complete';
import { COMPLETE_TRACED_SQL_V15 } from './1767100000001-job-queue-trace-context';
import { COMPLETE_VIEWS_SQL_V20 } from './1767500000002-job-queue-complete-views';

const DEP = `dep AS (
        SELECT d.job_id, COUNT(*) AS n FROM job_deps d JOIN done ON d.depends_on_id = done.id GROUP BY d.job_id),`;
const DEP_IN_ID_ORDER = `dep AS MATERIALIZED (
        SELECT d.job_id, COUNT(*) AS n FROM job_deps d JOIN done ON d.depends_on_id = done.id GROUP BY d.job_id ORDER BY d.job_id),`;

/** Migrations 15 and 20 created their functions; here they are replaced. */
const replacing = (text: string) => swapText(22, text, 'CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION');
const inIdOrder = (text: string) => swapText(22, text, DEP, DEP_IN_ID_ORDER);

/**
 * The batched completes count down and promote the dependents in id order. The dependents came
 * out of the count's hash aggregate in no order, so the promotion wrote their new row versions
 * (an entry in each of seven indexes: the key, the two ready indexes and the four find indexes)
 * at scattered places of every index. Materialized and sorted, the nested loop takes them in
 * order, and each index grows at its end. The root of a fresh 1 → 100,000 fan-out completed in
 * 1.99 s, now 1.25 s (EXPLAIN ANALYZE of the same statement before ANALYZE had run, as it is when
 * a big graph was just enqueued; 1.1 s either way once it has). Locks on the dependents are also
 * taken in id order now, like those of every other multi-row write here.
 */
/** The three completes as this migration leaves them (migration 24 derives from them). */
export const COMPLETE_SQL_V22 = inIdOrder(COMPLETE_SQL_V13);
export const COMPLETE_TRACED_SQL_V22 = inIdOrder(replacing(COMPLETE_TRACED_SQL_V15));
export const COMPLETE_VIEWS_SQL_V22 = inIdOrder(replacing(COMPLETE_VIEWS_SQL_V20));
export { DEP_IN_ID_ORDER };

export class JobQueuePromotionOrderPostgres1767800000001 extends JobQueueMigration {
  readonly version = 22;
  readonly name = 'JobQueuePromotionOrder1767800000001';
  protected readonly upSql = [COMPLETE_SQL_V22, COMPLETE_TRACED_SQL_V22, COMPLETE_VIEWS_SQL_V22];
  protected readonly downSql = [COMPLETE_SQL_V13, replacing(COMPLETE_TRACED_SQL_V15), replacing(COMPLETE_VIEWS_SQL_V20)];
}
