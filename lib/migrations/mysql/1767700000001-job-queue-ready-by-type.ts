import { JobQueueMigration } from '../job-queue-migration';
import { V8_COLUMNS } from './1766500000001-job-queue-next-groups-procedure';
import { rotationWalkProcedure, walkResultSets } from './1767600000001-job-queue-rotation-walk';

const GROUP = 'VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';

/**
 * The rotation walk by (group, type) pairs of the ready rows, one locking probe per pair: the
 * pair's first row in index order (its best job), locked with SKIP LOCKED. For a pair of the
 * worker's types that row is the pair's head (when it is due; a delayed head costs a second
 * probe, for the pair's first due job); for another type's pair it is only a step of the walk
 * (its lock ends with the claim, and other claimers skip it meanwhile). A group's next job is the
 * best of its pairs' heads (the others stay locked until the claim commits). So with one type, a
 * group costs one probe, as before, and another type's rows in the group cost one probe per pair
 * instead of one read per row. Same calls and result sets as migration 13's procedure.
 */
export function pairWalkProcedure(columns: string): string {
  const pair = (past: string) => `SELECT id, group_key, type, neg_priority, run_after <= UTC_TIMESTAMP(3)
            INTO v_id, v_group, v_type, v_np, v_due FROM jobs FORCE INDEX (jobs_ready_group_idx)
            WHERE state = 'ready' AND ${past} AND (v_before IS NULL OR group_key < v_before)
            ORDER BY group_key, type, neg_priority, id LIMIT 1 FOR UPDATE SKIP LOCKED`;
  return `CREATE PROCEDURE job_queue_rotation_walk(IN p_types TEXT, IN p_max INT, IN p_exclude TEXT)
    BEGIN
      DECLARE v_cur ${GROUP} DEFAULT '';
      DECLARE v_served INT DEFAULT 0;
      DECLARE v_from ${GROUP};
      DECLARE v_before ${GROUP} DEFAULT NULL;
      DECLARE v_head ${GROUP} DEFAULT NULL;
      DECLARE v_group ${GROUP};
      DECLARE v_type ${GROUP};
      DECLARE v_prev_group ${GROUP};
      DECLARE v_prev_type ${GROUP};
      DECLARE v_in ${GROUP} DEFAULT NULL;
      DECLARE v_best BIGINT DEFAULT NULL;
      DECLARE v_best_np INT;
      DECLARE v_id BIGINT;
      DECLARE v_np INT;
      DECLARE v_due BOOLEAN;
      DECLARE v_ids TEXT DEFAULT '';
      DECLARE v_found INT DEFAULT 0;
      DECLARE v_pass INT DEFAULT 1;
      DECLARE v_first BOOLEAN DEFAULT TRUE;
      -- No row yet: the defaults stand for a cursor at the start ('' and 0).
      SELECT group_key, served INTO v_cur, v_served FROM job_queue_rotation WHERE name = 'fair-share' FOR UPDATE;
      SET v_from = v_cur;
      walk: LOOP
        SET v_group = NULL;
        IF v_first THEN
          ${pair('group_key >= v_from')};
          SET v_first = FALSE;
        ELSE
          ${pair('(group_key > v_prev_group OR (group_key = v_prev_group AND type > v_prev_type))')};
        END IF;
        -- The group being read is complete: take its best head, if any.
        IF v_in IS NOT NULL AND (v_group IS NULL OR v_group <> v_in) THEN
          IF v_best IS NOT NULL THEN
            IF v_pass = 1 AND v_head IS NULL THEN SET v_head = v_in; END IF;
            SET v_ids = CONCAT(v_ids, IF(v_ids = '', '', ','), v_best);
            SET v_found = v_found + 1;
          END IF;
          SET v_in = NULL, v_best = NULL;
          IF v_found >= p_max THEN LEAVE walk; END IF;
        END IF;
        IF v_group IS NULL THEN
          IF v_pass = 2 THEN LEAVE walk; END IF;
          -- Wrap round: from the first group, below the first one this walk took.
          SET v_pass = 2, v_from = '', v_before = v_head, v_first = TRUE;
          ITERATE walk;
        END IF;
        SET v_in = v_group;
        IF JSON_CONTAINS(p_types, JSON_QUOTE(v_type)) AND (p_exclude IS NULL OR NOT JSON_CONTAINS(p_exclude, JSON_QUOTE(v_group))) THEN
          IF NOT v_due THEN
            -- A delayed head: the pair's first job due now, if any.
            SET v_id = NULL;
            SELECT id, neg_priority INTO v_id, v_np FROM jobs FORCE INDEX (jobs_ready_group_idx)
              WHERE state = 'ready' AND group_key = v_group AND type = v_type AND run_after <= UTC_TIMESTAMP(3)
              ORDER BY neg_priority, id LIMIT 1 FOR UPDATE SKIP LOCKED;
          END IF;
          IF v_id IS NOT NULL AND (v_best IS NULL OR v_np < v_best_np OR (v_np = v_best_np AND v_id < v_best)) THEN
            SET v_best = v_id, v_best_np = v_np;
          END IF;
        END IF;
        SET v_prev_group = v_group, v_prev_type = v_type;
      END LOOP;
${walkResultSets(columns)}    END`;
}

/**
 * The ready indexes by type: `jobs_ready_idx` becomes (state, type, neg_priority, id), so that a
 * claim of any group reads each of its types from its own stretch (one UNION arm per type,
 * lib/claim/ready-by-type.sql.ts) and never a row of a type it does not handle, and
 * `jobs_ready_group_idx` becomes (state, group_key, type, neg_priority, id): a group's quota is
 * read the same way, and the walks of the groups step over (group, type) pairs, the slot
 * planner's (lib/claim/rotation.sql.ts, nextReadyGroups) and the rotation's, below. The same names
 * as before, for the FORCE INDEX hints of processes still on the previous version during a
 * rolling upgrade (their claims of several types then sort, but work). See the PostgreSQL
 * migration of the same name.
 */
export class JobQueueReadyByTypeMysql1767700000001 extends JobQueueMigration {
  readonly version = 14;
  readonly name = 'JobQueueReadyByType1767700000001';
  protected readonly upSql = [
    `ALTER TABLE jobs DROP KEY jobs_ready_idx, ADD KEY jobs_ready_idx (state, type, neg_priority, id),
      DROP KEY jobs_ready_group_idx, ADD KEY jobs_ready_group_idx (state, group_key, type, neg_priority, id)`,
    `DROP PROCEDURE job_queue_rotation_walk`,
    pairWalkProcedure(`${V8_COLUMNS}, run_after, trace_context`),
  ];
  protected readonly downSql = [
    `DROP PROCEDURE job_queue_rotation_walk`,
    rotationWalkProcedure(`${V8_COLUMNS}, run_after, trace_context`),
    `ALTER TABLE jobs DROP KEY jobs_ready_group_idx, ADD KEY jobs_ready_group_idx (state, group_key, neg_priority, id),
      DROP KEY jobs_ready_idx, ADD KEY jobs_ready_idx (state, neg_priority, id)`,
  ];
}
