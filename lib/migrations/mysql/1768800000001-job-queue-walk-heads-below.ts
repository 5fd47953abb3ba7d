import { swapEvery } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { WALK_FLOORS_SQL_V21, WALK_SQL_V21 } from './1768700000001-job-queue-ready-due-order';

const every = (text: string, from: string, to: string, times: number): string => swapEvery(22, text, from, to, times);

/** Priority levels a walk looks at head by head below a pair's delayed head before one pass. */
const HEADS_ONE_BY_ONE = 8;

/**
 * A rotation walk (migration 21's frozen text) that looks below a pair's delayed head head by
 * head: the first entry of each lower priority in due order, one index entry each (the priority is
 * a variable, so a range bound), and within the first priority whose head is due its first job due
 * now, locked where the walk locks. One pass below the head stepped over every job due later of
 * the lower priorities: an idle worker's rotation claim took 150 ms beside 100,000 jobs due
 * tomorrow over priorities 0–4, holding the rotation cursor's lock. Past HEADS_ONE_BY_ONE
 * priorities the rest is read in one pass, as before.
 */
function headsBelow(text: string, lock: string): string {
  const old = `            -- A delayed head: the pair's first job due now, if any.
            SET v_id = NULL;
            SELECT id, neg_priority, run_after INTO v_id, v_np, v_ra FROM jobs FORCE INDEX (jobs_ready_group_idx)
              WHERE state = 'ready' AND group_key = v_group AND type = v_type AND run_after <= UTC_TIMESTAMP(3) AND neg_priority > v_np
              ORDER BY neg_priority, run_after, id LIMIT 1${lock};
`;
  const now = `            -- A delayed head: nothing of its priority is due. Each lower priority's head, then its
            -- first job due now where the head is due; past ${HEADS_ONE_BY_ONE} priorities, one pass.
            SET v_id = NULL, v_level = 0;
            below: LOOP
              IF v_level >= ${HEADS_ONE_BY_ONE} THEN
                SELECT id, neg_priority, run_after INTO v_id, v_np, v_ra FROM jobs FORCE INDEX (jobs_ready_group_idx)
                  WHERE state = 'ready' AND group_key = v_group AND type = v_type AND run_after <= UTC_TIMESTAMP(3) AND neg_priority > v_np
                  ORDER BY neg_priority, run_after, id LIMIT 1${lock};
                LEAVE below;
              END IF;
              SET v_level = v_level + 1, v_hid = NULL;
              SELECT id, neg_priority, run_after <= UTC_TIMESTAMP(3) INTO v_hid, v_hnp, v_hdue FROM jobs FORCE INDEX (jobs_ready_group_idx)
                WHERE state = 'ready' AND group_key = v_group AND type = v_type AND neg_priority > v_np
                ORDER BY neg_priority, run_after, id LIMIT 1;
              IF v_hid IS NULL THEN LEAVE below; END IF;
              SET v_np = v_hnp;
              IF v_hdue THEN
                SELECT id, neg_priority, run_after INTO v_id, v_np, v_ra FROM jobs FORCE INDEX (jobs_ready_group_idx)
                  WHERE state = 'ready' AND group_key = v_group AND type = v_type AND neg_priority = v_np AND run_after <= UTC_TIMESTAMP(3)
                  ORDER BY neg_priority, run_after, id LIMIT 1${lock};
                IF v_id IS NOT NULL THEN LEAVE below; END IF;
              END IF;
            END LOOP;
`;
  return every(
    every(text, `      DECLARE v_np INT;\n`, `      DECLARE v_np INT;\n      DECLARE v_hid BIGINT;\n      DECLARE v_hnp INT;\n      DECLARE v_hdue BOOLEAN;\n      DECLARE v_level INT;\n`, 1),
    old,
    now,
    1,
  );
}

export const WALK_SQL_V22 = headsBelow(WALK_SQL_V21, ' FOR UPDATE SKIP LOCKED');
export const WALK_FLOORS_SQL_V22 = headsBelow(WALK_FLOORS_SQL_V21, '');

export class JobQueueWalkHeadsBelowMysql1768800000001 extends JobQueueMigration {
  readonly version = 22;
  readonly name = 'JobQueueWalkHeadsBelow1768800000001';
  protected readonly upSql = [`DROP PROCEDURE job_queue_rotation_walk`, WALK_SQL_V22, `DROP PROCEDURE job_queue_rotation_walk_floors`, WALK_FLOORS_SQL_V22];
  protected readonly downSql = [`DROP PROCEDURE job_queue_rotation_walk`, WALK_SQL_V21, `DROP PROCEDURE job_queue_rotation_walk_floors`, WALK_FLOORS_SQL_V21];
}
