import { swapEvery } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { WALK_FLOORS_SQL_V22, WALK_SQL_V22 } from './1768800000001-job-queue-walk-heads-below';

const every = (text: string, from: string, to: string, times: number): string => swapEvery(29, text, from, to, times);

/** Pairs of other types a walk steps over in a group before it jumps; a jump probes each handled type once. */
const PAIRS_BEFORE_JUMP = 4;
/** Handled types a jump probes at most; past this the walk steps pair by pair. */
const JUMP_TYPES = 500;

/**
 * A rotation walk (migration 22's frozen text) that jumps past the types of other workers. It
 * stepped over every (group, type) pair of the ready rows, one probe each, handled or not: beside
 * one group holding 3,000 types another worker handles, each rotation claim took 136–158 ms
 * holding the rotation cursor's lock (2–4 ms without them). After a few such pairs in a group it
 * now probes the group's entry of each handled type above the current one (one index entry each,
 * the type list being the worker's few) and goes on from the first it finds, or else from the
 * next group. The comparisons are of utf8mb4_bin values, the index's own order.
 */
function jumping(text: string, lock: string): string {
  const step = (where: string) => `          SELECT id, group_key, type, neg_priority, run_after, run_after <= UTC_TIMESTAMP(3)
            INTO v_id, v_group, v_type, v_np, v_ra, v_due FROM jobs FORCE INDEX (jobs_ready_group_idx)
            WHERE state = 'ready' AND ${where} AND (v_before IS NULL OR group_key < v_before)
            ORDER BY group_key, type, neg_priority, run_after, id LIMIT 1${lock};
`;
  const declared = every(
    text,
    `      DECLARE v_level INT;\n`,
    `      DECLARE v_level INT;
      DECLARE v_t VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
      DECLARE v_jump VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
      DECLARE v_miss_group VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL;
      DECLARE v_miss INT DEFAULT 0;
      DECLARE v_mode INT DEFAULT 0;
      DECLARE v_i INT;
      DECLARE v_handled BOOLEAN;
`,
    1,
  );
  const stepping = every(
    declared,
    `        ELSE\n${step('(group_key > v_prev_group OR (group_key = v_prev_group AND type > v_prev_type))')}`,
    `        ELSEIF v_mode = 1 THEN
          -- The group's next pair of a handled type.
${step('group_key = v_prev_group AND type >= v_jump')}          SET v_mode = 0;
        ELSEIF v_mode = 2 THEN
          -- None left in the group: the next group.
${step('group_key > v_prev_group')}          SET v_mode = 0;
        ELSE\n${step('(group_key > v_prev_group OR (group_key = v_prev_group AND type > v_prev_type))')}`,
    1,
  );
  // Whether the pair's type is handled, read once (p_types is parsed on each JSON_CONTAINS).
  const handled = every(
    stepping,
    `        IF JSON_CONTAINS(p_types, JSON_QUOTE(v_type)) AND`,
    `        SET v_handled = JSON_CONTAINS(p_types, JSON_QUOTE(v_type));\n        IF v_handled AND`,
    1,
  );
  return every(
    handled,
    `        SET v_prev_group = v_group, v_prev_type = v_type;\n`,
    `        IF NOT v_handled THEN
          IF v_miss_group = v_group THEN SET v_miss = v_miss + 1; ELSE SET v_miss_group = v_group, v_miss = 1; END IF;
          IF v_miss >= ${PAIRS_BEFORE_JUMP} AND JSON_LENGTH(p_types) <= ${JUMP_TYPES} THEN
            SET v_jump = NULL, v_i = 0;
            WHILE v_i < JSON_LENGTH(p_types) DO
              SET v_t = JSON_UNQUOTE(JSON_EXTRACT(p_types, CONCAT('$[', v_i, ']')));
              IF v_t > v_type AND (v_jump IS NULL OR v_t < v_jump)
                  AND EXISTS (SELECT 1 FROM jobs FORCE INDEX (jobs_ready_group_idx) WHERE state = 'ready' AND group_key = v_group AND type = v_t) THEN
                SET v_jump = v_t;
              END IF;
              SET v_i = v_i + 1;
            END WHILE;
            SET v_mode = IF(v_jump IS NULL, 2, 1);
          END IF;
        END IF;
        SET v_prev_group = v_group, v_prev_type = v_type;\n`,
    1,
  );
}

export const WALK_SQL_V29 = jumping(WALK_SQL_V22, ' FOR UPDATE SKIP LOCKED');
export const WALK_FLOORS_SQL_V29 = jumping(WALK_FLOORS_SQL_V22, '');

export class JobQueueWalkJumpMysql1769900000001 extends JobQueueMigration {
  readonly version = 29;
  readonly name = 'JobQueueWalkJump1769900000001';
  protected readonly upSql = [`DROP PROCEDURE job_queue_rotation_walk`, WALK_SQL_V29, `DROP PROCEDURE job_queue_rotation_walk_floors`, WALK_FLOORS_SQL_V29];
  protected readonly downSql = [`DROP PROCEDURE job_queue_rotation_walk`, WALK_SQL_V22, `DROP PROCEDURE job_queue_rotation_walk_floors`, WALK_FLOORS_SQL_V22];
}
