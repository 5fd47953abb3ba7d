import { swapEvery, swapText } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { CLAIM_ROTATION_SQL_V33, COMPLETE_THEN_CLAIM_SQL_V33 } from './1768800000001-job-queue-weight-sets';

const OLD_ROTATION = 'job_queue_claim_rotation(text, text[], int, float8, boolean, text[], int[], text)';
const NEW_ROTATION = 'job_queue_claim_rotation(text, text[], int, float8, boolean, text[], int[], text, text)';
const NEW_COMPLETE_THEN_CLAIM =
  'job_queue_complete_then_claim(text, bigint[], text[], text[], boolean, text, text[], text[], int[], int, float8, boolean, int, text[], int[], boolean, text, text)';

/**
 * A rotation cursor per set of handled types, named by the caller ($9, see rotationCursorName),
 * where every worker shared 'fair-share': two services on one database (disjoint types) moved
 * it to their own groups in turn, and each walk began wherever the other left it, skipping its
 * own groups in between. The first claim of a set adds its row; a concurrent first claim's insert
 * meets it and does nothing. The previous forms stay, on 'fair-share', for processes of the
 * previous version during a rolling upgrade.
 */
export const CLAIM_ROTATION_SQL_V47 = swapEvery(
  47,
  swapText(
    47,
    swapText(47, CLAIM_ROTATION_SQL_V33, `CREATE FUNCTION ${OLD_ROTATION}`, `CREATE FUNCTION ${NEW_ROTATION}`),
    `FROM job_queue_rotation r WHERE r.name = 'fair-share' FOR UPDATE;
      IF NOT FOUND THEN v_cur := ''; v_served := 0; END IF;`,
    `FROM job_queue_rotation r WHERE r.name = $9 FOR UPDATE;
      IF NOT FOUND THEN
        INSERT INTO job_queue_rotation (name) VALUES ($9) ON CONFLICT (name) DO NOTHING;
        SELECT r.group_key, r.served INTO v_cur, v_served FROM job_queue_rotation r WHERE r.name = $9 FOR UPDATE;
        IF NOT FOUND THEN v_cur := ''; v_served := 0; END IF;
      END IF;`,
  ),
  `WHERE name = 'fair-share';`,
  `WHERE name = $9;`,
  1,
);

export const COMPLETE_THEN_CLAIM_SQL_V47 = swapText(
  47,
  swapText(
    47,
    COMPLETE_THEN_CLAIM_SQL_V33,
    'p_rotation int, p_weight_groups text[], p_weights int[], p_with_trace boolean, p_weight_set text)',
    'p_rotation int, p_weight_groups text[], p_weights int[], p_with_trace boolean, p_weight_set text, p_cursor text)',
  ),
  'job_queue_claim_rotation(p_owner, p_types, p_rotation, p_ttl, p_start, p_weight_groups, p_weights, p_weight_set)',
  'job_queue_claim_rotation(p_owner, p_types, p_rotation, p_ttl, p_start, p_weight_groups, p_weights, p_weight_set, p_cursor)',
);

export class JobQueueRotationCursorPerTypesPostgres1770100000001 extends JobQueueMigration {
  readonly version = 47;
  readonly name = 'JobQueueRotationCursorPerTypes1770100000001';
  protected readonly upSql = [CLAIM_ROTATION_SQL_V47, COMPLETE_THEN_CLAIM_SQL_V47];
  protected readonly downSql = [`DROP FUNCTION ${NEW_COMPLETE_THEN_CLAIM}`, `DROP FUNCTION ${NEW_ROTATION}`, `DELETE FROM job_queue_rotation WHERE name <> 'fair-share'`];
}
