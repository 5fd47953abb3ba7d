import { swapSpan, swapText } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { V8_COLUMNS } from './1766500000001-job-queue-next-groups-procedure';
import { pairWalkProcedure } from './1767700000001-job-queue-ready-by-type';

/**
 * The rotation walk of migration 14 (its frozen text, changed by the substitutions below) with
 * plain reads: the (group, type) pairs are stepped over without locks, and the heads taken are
 * locked at the end by id, in the statement that returns them (`FOR UPDATE SKIP LOCKED`, still
 * `ready`).
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
  const lock = ' FOR UPDATE SKIP LOCKED';
  const pairProbe = 'ORDER BY group_key, type, neg_priority, id LIMIT 1';
  let text = swapText(16, pairWalkProcedure(columns), 'CREATE PROCEDURE job_queue_rotation_walk(', 'CREATE PROCEDURE job_queue_rotation_walk_floors(');
  // The two pair steps (from the cursor, then past the previous pair), then the delayed head's probe.
  text = swapText(16, text, `${pairProbe}${lock}`, pairProbe);
  text = swapText(16, text, `${pairProbe}${lock}`, pairProbe);
  text = swapText(16, text, `ORDER BY neg_priority, id LIMIT 1${lock};`, 'ORDER BY neg_priority, id LIMIT 1;');
  return swapSpan(
    16,
    text,
    '      -- In walk order (the cursor',
    'DEALLOCATE PREPARE job_queue_rotation_walk_stmt;\n',
    `      -- The heads, locked, in walk order (the cursor's groups, then the wrapped ones). A head that
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
`,
  );
}

/** MySQL migration 16: job_queue_rotation_walk_floors, above; migration 14's procedure stays. */
export class JobQueueRotationWalkFloorsMysql1768200000001 extends JobQueueMigration {
  readonly version = 16;
  readonly name = 'JobQueueRotationWalkFloors1768200000001';
  protected readonly upSql = [rotationWalkFloorsProcedure(`${V8_COLUMNS}, run_after, trace_context`)];
  protected readonly downSql = [`DROP PROCEDURE job_queue_rotation_walk_floors`];
}
