import { swapText } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { V8_COLUMNS } from './1766500000001-job-queue-next-groups-procedure';
import { pairWalkProcedure } from './1767700000001-job-queue-ready-by-type';
import { rotationWalkFloorsProcedure } from './1768200000001-job-queue-rotation-walk-floors';

const COLUMNS = `${V8_COLUMNS}, run_after, trace_context`;
const EXCLUDED = `(p_exclude IS NULL OR NOT JSON_CONTAINS(p_exclude, JSON_QUOTE(v_group)))`;

/** A walk procedure whose steps pass over the groups paused in `job_queue_paused` too. */
function readingPausedTable(text: string): string {
  const declared = swapText(
    17,
    text,
    `      DECLARE v_first BOOLEAN DEFAULT TRUE;\n`,
    `      DECLARE v_first BOOLEAN DEFAULT TRUE;\n      DECLARE v_paused BOOLEAN DEFAULT EXISTS (SELECT 1 FROM job_queue_paused WHERE kind = 'group');\n`,
  );
  return swapText(
    17,
    declared,
    EXCLUDED,
    `${EXCLUDED}\n            AND NOT (v_paused AND EXISTS (SELECT 1 FROM job_queue_paused WHERE kind = 'group' AND name = v_group))`,
  );
}

export const WALK_SQL_V17 = readingPausedTable(pairWalkProcedure(COLUMNS));
export const WALK_FLOORS_SQL_V17 = readingPausedTable(rotationWalkFloorsProcedure(COLUMNS));

/**
 * The rotation walks read the paused groups from `job_queue_paused`, instead of receiving them in
 * `p_exclude`: a TEXT parameter, which holds 65,535 bytes, so past about 5,000 paused groups every
 * rotation claim failed ("Data too long for column 'p_exclude'"), and below that each step parsed
 * the whole JSON list again. `p_exclude` now carries only the groups at their `limits` cap (a
 * list the options bound). A step over a paused group costs one primary-key probe, and none
 * while nothing is paused. Processes of the previous version still pass paused groups in
 * `p_exclude`, which still excludes them.
 */
export class JobQueueWalkPausedTableMysql1768300000001 extends JobQueueMigration {
  readonly version = 17;
  readonly name = 'JobQueueWalkPausedTable1768300000001';
  protected readonly upSql = [`DROP PROCEDURE job_queue_rotation_walk`, WALK_SQL_V17, `DROP PROCEDURE job_queue_rotation_walk_floors`, WALK_FLOORS_SQL_V17];
  protected readonly downSql = [
    `DROP PROCEDURE job_queue_rotation_walk`,
    pairWalkProcedure(COLUMNS),
    `DROP PROCEDURE job_queue_rotation_walk_floors`,
    rotationWalkFloorsProcedure(COLUMNS),
  ];
}
