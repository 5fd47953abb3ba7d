import { JobQueueMigration } from '../job-queue-migration';

/** One probe of the walk: the next claimable job in ready-group index order, locked. */
const probe = (bound: string) => `SELECT id, group_key INTO v_id, v_group FROM jobs FORCE INDEX (jobs_ready_group_idx)
          WHERE state = 'ready' AND run_after <= UTC_TIMESTAMP(3) AND JSON_CONTAINS(p_types, JSON_QUOTE(type))
            AND ${bound} AND (p_before IS NULL OR group_key < p_before)
          ORDER BY group_key, neg_priority, id LIMIT 1 FOR UPDATE SKIP LOCKED`;

/** The columns the procedure returned until MySQL migration 12 added run_after. */
export const V8_COLUMNS = 'id, type, args, attempts, max_attempts, group_key, priority, parent_id, timeout_ms, weight';

/** The procedure, returning these columns of the locked jobs (a trusted constant list). */
export function nextGroupsProcedure(columns: string): string {
  return `CREATE PROCEDURE job_queue_next_groups(
      IN p_types TEXT,
      IN p_from VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
      IN p_before VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
      IN p_max INT,
      IN p_exclude TEXT)
    BEGIN
      DECLARE v_id BIGINT;
      DECLARE v_group VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
      DECLARE v_ids TEXT DEFAULT '';
      DECLARE v_found INT DEFAULT 0;
      DECLARE v_first BOOLEAN DEFAULT TRUE;
      walk: WHILE v_found < p_max DO
        SET v_id = NULL;
        IF v_first THEN
          ${probe('group_key >= p_from')};
          SET v_first = FALSE;
        ELSE
          ${probe('group_key > v_group')};
        END IF;
        IF v_id IS NULL THEN LEAVE walk; END IF;
        IF p_exclude IS NULL OR NOT JSON_CONTAINS(p_exclude, JSON_QUOTE(v_group)) THEN
          SET v_ids = CONCAT(v_ids, IF(v_ids = '', '', ','), v_id);
          SET v_found = v_found + 1;
        END IF;
      END WHILE;
      -- A locking read: the rows are this transaction's already, and it reads their latest version.
      SET @job_queue_next_groups = CONCAT(
        'SELECT ${columns} FROM jobs WHERE ',
        IF(v_ids = '', 'FALSE', CONCAT('id IN (', v_ids, ')')), ' ORDER BY group_key FOR UPDATE');
      PREPARE job_queue_next_groups_stmt FROM @job_queue_next_groups;
      EXECUTE job_queue_next_groups_stmt;
      DEALLOCATE PREPARE job_queue_next_groups_stmt;
    END`;
}

export class JobQueueNextGroupsProcedureMysql1766500000001 extends JobQueueMigration {
  readonly version = 8;
  readonly name = 'JobQueueNextGroupsProcedure1766500000001';
  protected readonly upSql = [
    // The rotation claim's walk (lib/claim/rotation.sql.ts, nextReadyGroups with lock) run on the
    // server: up to p_max groups with claimable jobs from p_from (inclusive) and below p_before
    // (if not null), one probe per group, each an ORDER BY … LIMIT 1 read of the ready group
    // index that locks the group's next job with SKIP LOCKED. Sent from the client, that was a
    // round trip per group served, so a claim of 10 groups cost about four single-group claims.
    // Not a recursive CTE: MariaDB walks the index from its start for each step of one.
    // p_types and p_exclude (paused groups, stepped over) are JSON arrays of strings. Returns the
    // locked jobs, with their weight, in group order.
    nextGroupsProcedure(V8_COLUMNS),
  ];
  protected readonly downSql = [`DROP PROCEDURE job_queue_next_groups`];
}
