import { JobQueueMigration } from '../job-queue-migration';
import { V8_COLUMNS } from './1766500000001-job-queue-next-groups-procedure';

const GROUP = 'VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';

/**
 * The procedure's last two result sets, shared with later versions of it: the cursor as read, then
 * these columns of the jobs whose ids are in `v_ids` (comma-separated), locked, in walk order.
 */
export function walkResultSets(columns: string): string {
  return `      SELECT v_cur AS group_key, v_served AS served;
      -- In walk order (the cursor's groups, then the wrapped ones); a locking read of rows this
      -- transaction holds already, so it reads their latest version.
      SET @job_queue_rotation_walk = CONCAT(
        'SELECT ${columns} FROM jobs WHERE ',
        IF(v_ids = '', 'FALSE', CONCAT('id IN (', v_ids, ') ORDER BY FIELD(id, ', v_ids, ')')), ' FOR UPDATE');
      PREPARE job_queue_rotation_walk_stmt FROM @job_queue_rotation_walk;
      EXECUTE job_queue_rotation_walk_stmt;
      DEALLOCATE PREPARE job_queue_rotation_walk_stmt;
`;
}

/** The procedure, returning the cursor, then these columns of the locked jobs (a trusted constant list). */
export function rotationWalkProcedure(columns: string): string {
  const probe = (lower: string) => `SELECT id, group_key INTO v_id, v_group FROM jobs FORCE INDEX (jobs_ready_group_idx)
            WHERE state = 'ready' AND run_after <= UTC_TIMESTAMP(3) AND JSON_CONTAINS(p_types, JSON_QUOTE(type))
              AND ${lower} AND (v_before IS NULL OR group_key < v_before)
            ORDER BY group_key, neg_priority, id LIMIT 1 FOR UPDATE SKIP LOCKED`;
  return `CREATE PROCEDURE job_queue_rotation_walk(IN p_types TEXT, IN p_max INT, IN p_exclude TEXT)
    BEGIN
      DECLARE v_cur ${GROUP} DEFAULT '';
      DECLARE v_served INT DEFAULT 0;
      DECLARE v_from ${GROUP};
      DECLARE v_before ${GROUP} DEFAULT NULL;
      DECLARE v_head ${GROUP} DEFAULT NULL;
      DECLARE v_group ${GROUP};
      DECLARE v_id BIGINT;
      DECLARE v_ids TEXT DEFAULT '';
      DECLARE v_found INT DEFAULT 0;
      DECLARE v_pass INT DEFAULT 1;
      DECLARE v_first BOOLEAN DEFAULT TRUE;
      -- No row yet: the defaults stand for a cursor at the start ('' and 0).
      SELECT group_key, served INTO v_cur, v_served FROM job_queue_rotation WHERE name = 'fair-share' FOR UPDATE;
      SET v_from = v_cur;
      walk: LOOP
        IF v_found >= p_max THEN LEAVE walk; END IF;
        SET v_id = NULL;
        IF v_first THEN
          ${probe('group_key >= v_from')};
          SET v_first = FALSE;
        ELSE
          ${probe('group_key > v_group')};
        END IF;
        IF v_id IS NULL THEN
          IF v_pass = 2 THEN LEAVE walk; END IF;
          -- Wrap round: from the first group, below the first one this walk took.
          SET v_pass = 2, v_from = '', v_before = v_head, v_first = TRUE;
          ITERATE walk;
        END IF;
        IF p_exclude IS NULL OR NOT JSON_CONTAINS(p_exclude, JSON_QUOTE(v_group)) THEN
          IF v_pass = 1 AND v_head IS NULL THEN SET v_head = v_group; END IF;
          SET v_ids = CONCAT(v_ids, IF(v_ids = '', '', ','), v_id);
          SET v_found = v_found + 1;
        END IF;
      END LOOP;
${walkResultSets(columns)}    END`;
}

/**
 * A rotation claim's whole walk in one call: the cursor's lock, the groups from it and the wrap
 * round to the first groups. Before, that was two or three round trips of a claim's five or six
 * (lock the cursor; CALL job_queue_next_groups; again when the walk wrapped), while a claim of a
 * single group is four: on MariaDB, where each round trip is most of a claim's cost, 1,000 groups
 * ran at ~0.77x of one group. Returns two result sets: the cursor (group_key, served) as read,
 * then the locked jobs with their weight, in walk order. p_types and p_exclude (paused groups,
 * stepped over) are JSON arrays of strings. job_queue_next_groups stays: processes of the
 * previous version call it until a rolling upgrade has replaced them.
 */
export class JobQueueRotationWalkMysql1767600000001 extends JobQueueMigration {
  readonly version = 13;
  readonly name = 'JobQueueRotationWalk1767600000001';
  protected readonly upSql = [rotationWalkProcedure(`${V8_COLUMNS}, run_after, trace_context`)];
  protected readonly downSql = [`DROP PROCEDURE job_queue_rotation_walk`];
}
