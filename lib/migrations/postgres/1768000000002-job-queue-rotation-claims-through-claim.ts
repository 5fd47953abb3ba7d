import { swapSpan } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { CLAIM_ROTATION_SQL_V21 } from './1767700000001-job-queue-ready-by-type';

/**
 * The rotation claim takes the groups' shares it planned through `job_queue_claim` (per-group
 * quotas, no any-group part), the statement the plain claim runs, instead of its own copy of it.
 * Its copy was planned anew on every call: the function lacked `plan_cache_mode =
 * force_generic_plan`, and the custom plan (an UPDATE of a table with fourteen indexes) always
 * looked cheaper than the generic one. That planning was most of what an idle worker's wake-up
 * claim cost over the plain claim (pgbench, one job per claim: 0.6-0.9 ms in the function against
 * 0.2-0.3 ms); the claim function's plan is generic and kept per session. The jobs taken, their
 * order within a group and the lease are the same: the statement was the claim's `grouped` part.
 */
export const CLAIM_ROTATION_SQL_V26 = swapSpan(
  26,
  CLAIM_ROTATION_SQL_V21,
  'RETURN QUERY\n      WITH picked AS (',
  'RETURNING jobs.*;',
  'RETURN QUERY SELECT * FROM job_queue_claim($1, $2, v_q_groups, v_q_limits, 0, $4, $5);',
);

export class JobQueueRotationClaimsThroughClaimPostgres1768000000002 extends JobQueueMigration {
  readonly version = 26;
  readonly name = 'JobQueueRotationClaimsThroughClaim1768000000002';
  protected readonly upSql = [CLAIM_ROTATION_SQL_V26];
  protected readonly downSql = [CLAIM_ROTATION_SQL_V21];
}
