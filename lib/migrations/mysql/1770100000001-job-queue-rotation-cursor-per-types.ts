import { swapText } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { WALK_FLOORS_SQL_V30, WALK_SQL_V30 } from './1770000000001-job-queue-ready-type-group-index';

/**
 * The rotation walks (migration 30's frozen text) under new names, following the cursor the
 * caller names (p_cursor, see rotationCursorName) where every worker shared 'fair-share' (see the
 * PostgreSQL migration of the same name). The first claim of a set of types adds its row; of
 * concurrent first claims, the later inserts find it and do nothing. The old procedures stay, on
 * 'fair-share', for processes of the previous version during a rolling upgrade: a procedure
 * cannot take an argument more under its old name without breaking their calls.
 */
function followingNamedCursor(text: string, from: string, to: string): string {
  const renamed = swapText(
    31,
    text,
    `CREATE PROCEDURE ${from}(IN p_types TEXT,`,
    `CREATE PROCEDURE ${to}(IN p_cursor VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, IN p_types TEXT,`,
  );
  const declared = swapText(31, renamed, `      DECLARE v_served INT DEFAULT 0;\n`, `      DECLARE v_served INT DEFAULT 0;\n      DECLARE v_has BOOLEAN DEFAULT FALSE;\n`);
  return swapText(
    31,
    declared,
    `      -- No row yet: the defaults stand for a cursor at the start ('' and 0).
      SELECT group_key, served INTO v_cur, v_served FROM job_queue_rotation WHERE name = 'fair-share' FOR UPDATE;
`,
    `      SELECT group_key, served, TRUE INTO v_cur, v_served, v_has FROM job_queue_rotation WHERE name = p_cursor FOR UPDATE;
      IF NOT v_has THEN
        -- The first claim of these types: its cursor, at the start ('' and 0).
        INSERT IGNORE INTO job_queue_rotation (name) VALUES (p_cursor);
        SELECT group_key, served INTO v_cur, v_served FROM job_queue_rotation WHERE name = p_cursor FOR UPDATE;
      END IF;
`,
  );
}

export const CURSOR_WALK_SQL_V31 = followingNamedCursor(WALK_SQL_V30, 'job_queue_rotation_walk', 'job_queue_cursor_walk');
export const CURSOR_WALK_FLOORS_SQL_V31 = followingNamedCursor(WALK_FLOORS_SQL_V30, 'job_queue_rotation_walk_floors', 'job_queue_cursor_walk_floors');

export class JobQueueRotationCursorPerTypesMysql1770100000001 extends JobQueueMigration {
  readonly version = 31;
  readonly name = 'JobQueueRotationCursorPerTypes1770100000001';
  protected readonly upSql = [CURSOR_WALK_SQL_V31, CURSOR_WALK_FLOORS_SQL_V31];
  protected readonly downSql = [`DROP PROCEDURE job_queue_cursor_walk`, `DROP PROCEDURE job_queue_cursor_walk_floors`, `DELETE FROM job_queue_rotation WHERE name <> 'fair-share'`];
}
