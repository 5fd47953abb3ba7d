import { swapEvery, swapSpan } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { WALK_FLOORS_SQL_V29, WALK_SQL_V29 } from './1769900000001-job-queue-walk-jump';

const every = (text: string, from: string, to: string, times: number): string => swapEvery(30, text, from, to, times);

/** Pairs of other types a walk steps over in a row before it jumps; a jump probes each handled type once. */
const PAIRS_BEFORE_JUMP = 4;
/** Handled types a jump probes at most; past this the walk steps pair by pair. */
const JUMP_TYPES = 500;

/** A handled type's next group from the (type, group) index, from or after the current one. */
const nextGroup = (from: string) => `SELECT group_key INTO v_tg FROM jobs FORCE INDEX (jobs_ready_type_group_idx)
                  WHERE ready_type = v_t AND group_key ${from} v_group AND (v_before IS NULL OR group_key < v_before)
                  ORDER BY ready_type, group_key LIMIT 1;`;

/**
 * The rotation walks (migration 29's frozen text) jump past other workers' types across groups
 * too, through the new index. Migration 29 jumped within a group only: a group per other
 * worker's tenant still cost a probe each (20,000 of them: 500 ms per rotation claim, holding
 * the rotation cursor's lock). After a few pairs of other types in a row, in one group or across
 * several, the walk probes each handled type's next group (one index entry each) and goes on
 * from the first pair found; with none ahead, the pass is over.
 */
function jumpingAcross(text: string, lock: string): string {
  const declared = every(
    every(text, `      DECLARE v_miss_group VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL;\n`, '', 1),
    `      DECLARE v_handled BOOLEAN;\n`,
    `      DECLARE v_handled BOOLEAN;
      DECLARE v_jump_group VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
      DECLARE v_tg VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
`,
    1,
  );
  const stepping = every(
    declared,
    `          -- The group's next pair of a handled type.
          SELECT id, group_key, type, neg_priority, run_after, run_after <= UTC_TIMESTAMP(3)
            INTO v_id, v_group, v_type, v_np, v_ra, v_due FROM jobs FORCE INDEX (jobs_ready_group_idx)
            WHERE state = 'ready' AND group_key = v_prev_group AND type >= v_jump AND (v_before IS NULL OR group_key < v_before)
            ORDER BY group_key, type, neg_priority, run_after, id LIMIT 1${lock};
          SET v_mode = 0;
        ELSEIF v_mode = 2 THEN
          -- None left in the group: the next group.
          SELECT id, group_key, type, neg_priority, run_after, run_after <= UTC_TIMESTAMP(3)
            INTO v_id, v_group, v_type, v_np, v_ra, v_due FROM jobs FORCE INDEX (jobs_ready_group_idx)
            WHERE state = 'ready' AND group_key > v_prev_group AND (v_before IS NULL OR group_key < v_before)
            ORDER BY group_key, type, neg_priority, run_after, id LIMIT 1${lock};
          SET v_mode = 0;
`,
    `          -- The pair the jump found, or the next one (a claim may have taken its rows since).
          SELECT id, group_key, type, neg_priority, run_after, run_after <= UTC_TIMESTAMP(3)
            INTO v_id, v_group, v_type, v_np, v_ra, v_due FROM jobs FORCE INDEX (jobs_ready_group_idx)
            WHERE state = 'ready' AND (group_key > v_jump_group OR (group_key = v_jump_group AND type >= v_jump)) AND (v_before IS NULL OR group_key < v_before)
            ORDER BY group_key, type, neg_priority, run_after, id LIMIT 1${lock};
          SET v_mode = 0;
        ELSEIF v_mode = 2 THEN
          -- Nothing of a handled type ahead: the pass is over (v_group stays NULL).
          SET v_mode = 0;
`,
    1,
  );
  // Migration 29's jump within a group, from its first line to its last, replaced whole.
  return swapSpan(
    30,
    stepping,
    `        IF NOT v_handled THEN\n          IF v_miss_group = v_group THEN`,
    `            SET v_mode = IF(v_jump IS NULL, 2, 1);\n          END IF;\n        END IF;\n`,
    `        IF NOT v_handled THEN
          SET v_miss = v_miss + 1;
          IF v_miss >= ${PAIRS_BEFORE_JUMP} AND JSON_LENGTH(p_types) <= ${JUMP_TYPES} THEN
            SET v_jump = NULL, v_jump_group = NULL, v_miss = 0, v_i = 0;
            WHILE v_i < JSON_LENGTH(p_types) DO
              SET v_t = JSON_UNQUOTE(JSON_EXTRACT(p_types, CONCAT('$[', v_i, ']'))), v_tg = NULL;
              -- A type after the current one may come next in this group; the others, in a later group.
              IF v_t > v_type THEN
                ${nextGroup('>=')}
              ELSE
                ${nextGroup('>')}
              END IF;
              IF v_tg IS NOT NULL AND (v_jump_group IS NULL OR v_tg < v_jump_group OR (v_tg = v_jump_group AND v_t < v_jump)) THEN
                SET v_jump_group = v_tg, v_jump = v_t;
              END IF;
              SET v_i = v_i + 1;
            END WHILE;
            SET v_mode = IF(v_jump IS NULL, 2, 1);
          END IF;
        ELSE
          SET v_miss = 0;
        END IF;
`,
  );
}

export const WALK_SQL_V30 = jumpingAcross(WALK_SQL_V29, ' FOR UPDATE SKIP LOCKED');
export const WALK_FLOORS_SQL_V30 = jumpingAcross(WALK_FLOORS_SQL_V29, '');

/**
 * The ready rows in (type, group) order, for the walk of ready groups to jump past the groups
 * that hold none of a worker's types (see the PostgreSQL migration of the same name). MySQL has
 * no partial index: `ready_type` is the type while the job is ready and NULL after, so a job's
 * entry changes once, at its claim, where `(state, type, group_key)` would change at each state
 * it passes. The virtual column is added without copying the table, then the index in place,
 * writes continuing.
 */
export class JobQueueReadyTypeGroupIndexMysql1770000000001 extends JobQueueMigration {
  readonly version = 30;
  readonly name = 'JobQueueReadyTypeGroupIndex1770000000001';
  protected readonly upSql = [
    // Two statements: MariaDB builds an index online (LOCK=NONE) only when the virtual column's
    // addition (instant, no copy) is not in the same ALTER; together they block writes throughout.
    `ALTER TABLE jobs ADD COLUMN ready_type VARCHAR(200) AS (IF(state = 'ready', type, NULL)) VIRTUAL`,
    `ALTER TABLE jobs ADD KEY jobs_ready_type_group_idx (ready_type, group_key)`,
    `DROP PROCEDURE job_queue_rotation_walk`,
    WALK_SQL_V30,
    `DROP PROCEDURE job_queue_rotation_walk_floors`,
    WALK_FLOORS_SQL_V30,
  ];
  protected readonly downSql = [
    `DROP PROCEDURE job_queue_rotation_walk`,
    WALK_SQL_V29,
    `DROP PROCEDURE job_queue_rotation_walk_floors`,
    WALK_FLOORS_SQL_V29,
    `ALTER TABLE jobs DROP KEY jobs_ready_type_group_idx, DROP COLUMN ready_type`,
  ];
}
