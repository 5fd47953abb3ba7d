import { JobQueueMigration } from '../job-queue-migration';
import { V8_COLUMNS } from './1766500000001-job-queue-next-groups-procedure';

const GROUP = 'VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';

/**
 * The rotation walk of migration 14 with plain reads: the (group, type) pairs are stepped over
 * without locks, and the heads taken are locked at the end by id, in the statement that returns
 * them (`FOR UPDATE SKIP LOCKED`, still `ready`).
 *
 * Why: claiming a row leaves its old `jobs_ready_group_idx` entry in place, delete-marked, until
 * purge removes it. A locking read checks each such entry it passes through the clustered index; a
 * consistent read steps over them. Purge lags a busy queue and stops while any transaction holds
 * an older snapshot (`mysqldump --single-transaction`, a long report): each locking probe then
 * walked every job claimed from its pair since, and 60,000 jobs over 200 groups drained at 546
 * jobs/s, slower each quarter (lib/claim/ready-by-type.sql.ts, readyFloorsStatement, is the plain
 * claim's version of the same fix). Same calls and result sets as job_queue_rotation_walk, which
 * stays for the claim inside a finalize that made rows ready: a consistent read of index pages its
 * own transaction changed looks each entry up in the clustered index.
 *
 * Rotation claims queue on the cursor's row lock, so no other rotation claim can take or lock a
 * head between its read and its lock. Another kind of claim (a group's own quota) or a retry can:
 * that group then gives no job this time, where the locking walk took the pair's next row. One
 * locking probe per head from there instead cost 1.5x per walk (a statement inside a procedure
 * costs ~60 us on MariaDB), and a UNION of such probes, prepared per call, 2.5x; this one costs
 * 1.02x of the locking walk without a snapshot (bench/HISTORY.md, mysql).
 */
export function rotationWalkFloorsProcedure(columns: string): string {
  const pair = (past: string) => `SELECT id, group_key, type, neg_priority, run_after <= UTC_TIMESTAMP(3)
            INTO v_id, v_group, v_type, v_np, v_due FROM jobs FORCE INDEX (jobs_ready_group_idx)
            WHERE state = 'ready' AND ${past} AND (v_before IS NULL OR group_key < v_before)
            ORDER BY group_key, type, neg_priority, id LIMIT 1`;
  return `CREATE PROCEDURE job_queue_rotation_walk_floors(IN p_types TEXT, IN p_max INT, IN p_exclude TEXT)
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
              ORDER BY neg_priority, id LIMIT 1;
          END IF;
          IF v_id IS NOT NULL AND (v_best IS NULL OR v_np < v_best_np OR (v_np = v_best_np AND v_id < v_best)) THEN
            SET v_best = v_id, v_best_np = v_np;
          END IF;
        END IF;
        SET v_prev_group = v_group, v_prev_type = v_type;
      END LOOP;
      SELECT v_cur AS group_key, v_served AS served;
      -- The heads, locked, in walk order (the cursor's groups, then the wrapped ones). A head that
      -- another transaction claimed or locked since it was read is left out. The primary key only:
      -- with \`state\` in the condition the optimizer also dived into every index on state for
      -- each id, ~100 us a call.
      SET @job_queue_rotation_walk = CONCAT(
        'SELECT ${columns} FROM jobs FORCE INDEX (PRIMARY) WHERE ',
        IF(v_ids = '', 'FALSE', CONCAT('id IN (', v_ids, ') AND state = ''ready'' AND run_after <= UTC_TIMESTAMP(3)',
          ' ORDER BY FIELD(id, ', v_ids, ')')), ' FOR UPDATE SKIP LOCKED');
      PREPARE job_queue_rotation_walk_stmt FROM @job_queue_rotation_walk;
      EXECUTE job_queue_rotation_walk_stmt;
      DEALLOCATE PREPARE job_queue_rotation_walk_stmt;
    END`;
}

/** MySQL migration 16: job_queue_rotation_walk_floors, above; migration 14's procedure stays. */
export class JobQueueRotationWalkFloorsMysql1768200000001 extends JobQueueMigration {
  readonly version = 16;
  readonly name = 'JobQueueRotationWalkFloors1768200000001';
  protected readonly upSql = [rotationWalkFloorsProcedure(`${V8_COLUMNS}, run_after, trace_context`)];
  protected readonly downSql = [`DROP PROCEDURE job_queue_rotation_walk_floors`];
}
