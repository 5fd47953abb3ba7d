import { swapEvery, swapText } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { CLAIM_ROTATION_SQL_V26 } from './1768000000002-job-queue-rotation-claims-through-claim';
import { COMPLETE_THEN_CLAIM_SQL_V27 } from './1768100000001-job-queue-complete-then-claim';

const OLD_ROTATION = 'job_queue_claim_rotation(text, text[], int, float8, boolean, text[], int[])';
const NEW_ROTATION = 'job_queue_claim_rotation(text, text[], int, float8, boolean, text[], int[], text)';

/** A group's configured weight: from the call's arrays (a few), else from the stored set (many). */
const weightOf = (group: string) =>
  `coalesce($7[array_position($6, ${group})], CASE WHEN $8 IS NOT NULL THEN (SELECT w.weight FROM job_queue_group_weights w WHERE w.set_id = $8 AND w.group_key = ${group}) END, `;

/**
 * `groupWeights` by the thousand (a weight per tenant) as a stored set the rotation claim looks a
 * group up in, instead of two array parameters. The arrays were parsed on every claim and searched
 * once per group visited, so a claim's cost grew with every weight configured: 100 live groups, one
 * worker, 4,425 jobs/s with 101 weights, 2,309–2,445 with 10,100, 895 with 30,100. A set is
 * immutable and named by a hash of its content (lib/claim/weight-sets.sql.ts), so processes with
 * the same options share it and processes with other options (a rolling deploy) keep theirs; each
 * process marks its set seen at boot and daily, and a set nobody has marked for 30 days is deleted.
 * The rotation claim and the complete that ends with it take the set's name as one more argument;
 * the old forms stay for processes of the previous version during a rolling upgrade.
 */
export const CLAIM_ROTATION_SQL_V33 = swapEvery(
  33,
  swapEvery(
    33,
    swapText(33, CLAIM_ROTATION_SQL_V26, `CREATE OR REPLACE FUNCTION ${OLD_ROTATION}`, `CREATE FUNCTION ${NEW_ROTATION}`),
    'coalesce($7[array_position($6, v_groups[i])], ',
    weightOf('v_groups[i]'),
    1,
  ),
  'coalesce($7[array_position($6, v_groups[v_completed])], ',
  weightOf('v_groups[v_completed]'),
  1,
);

export const COMPLETE_THEN_CLAIM_SQL_V33 = swapText(
  33,
  swapText(
    33,
    COMPLETE_THEN_CLAIM_SQL_V27,
    'p_rotation int, p_weight_groups text[], p_weights int[], p_with_trace boolean)',
    'p_rotation int, p_weight_groups text[], p_weights int[], p_with_trace boolean, p_weight_set text)',
  ),
  'job_queue_claim_rotation(p_owner, p_types, p_rotation, p_ttl, p_start, p_weight_groups, p_weights)',
  'job_queue_claim_rotation(p_owner, p_types, p_rotation, p_ttl, p_start, p_weight_groups, p_weights, p_weight_set)',
);

export class JobQueueWeightSetsPostgres1768800000001 extends JobQueueMigration {
  readonly version = 33;
  readonly name = 'JobQueueWeightSets1768800000001';
  protected readonly upSql = [
    `CREATE TABLE IF NOT EXISTS job_queue_weight_sets (
      id varchar(64) PRIMARY KEY,
      weights integer NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      seen_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE TABLE IF NOT EXISTS job_queue_group_weights (
      set_id varchar(64) NOT NULL REFERENCES job_queue_weight_sets (id) ON DELETE CASCADE,
      group_key varchar(200) NOT NULL,
      weight integer NOT NULL,
      PRIMARY KEY (set_id, group_key)
    )`,
    CLAIM_ROTATION_SQL_V33,
    COMPLETE_THEN_CLAIM_SQL_V33,
  ];
  protected readonly downSql = [
    `DROP FUNCTION job_queue_complete_then_claim(text, bigint[], text[], text[], boolean, text, text[], text[], int[], int, float8, boolean, int, text[], int[], boolean, text)`,
    `DROP FUNCTION ${NEW_ROTATION}`,
    `DROP TABLE IF EXISTS job_queue_group_weights`,
    `DROP TABLE IF EXISTS job_queue_weight_sets`,
  ];
}
