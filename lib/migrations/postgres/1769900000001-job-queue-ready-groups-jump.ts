import { swapText } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { READY_GROUPS_SQL_V32 } from './1768700000001-job-queue-ready-due-order';

const swap = (text: string, from: string, to: string): string => swapText(45, text, from, to);

/** Pairs of other types a walk steps over in a group before it jumps; a jump probes each handled type once. */
const PAIRS_BEFORE_JUMP = 4;
/** Handled types a jump probes at most; past this the walk steps pair by pair. */
const JUMP_TYPES = 500;

/**
 * The walk of ready groups jumps past the types of other workers. It stepped over every (group,
 * type) pair of the ready rows, one probe each, handled or not: beside one group holding 3,000
 * types another worker handles, a planner's look took 48–60 ms and a rotation claim 42–67 ms
 * holding the rotation cursor's lock (against 1–8 ms without them). After a few such pairs in a
 * group it now probes the group's entry of each handled type above the current one (one index
 * entry each) and goes on from the first it finds, or else from the next group.
 */
export const READY_GROUPS_SQL_V45 = swap(
  swap(
    swap(
      swap(
        READY_GROUPS_SQL_V32,
        // The jump's sort of a few rows is costed at enable_sort's penalty, far past jit_above_cost:
        // JIT compiled it on each call (86 ms).
        `      SET enable_seqscan = off\n`,
        `      SET enable_seqscan = off\n      SET jit = off\n`,
      ),
      `      v_p int;\n`,
      `      v_p int;\n      v_h text;\n      v_mg text;\n      v_miss int := 0;\n      v_jump boolean := cardinality($1) <= ${JUMP_TYPES};\n`,
    ),
    `        ELSIF $3 IS NULL THEN
          SELECT j.group_key, j.type, j.weight, j.run_after <= now() INTO v_g, v_t, v_w, v_due FROM jobs j
            WHERE j.state = 'ready' AND (j.group_key, j.type) > (v_g, v_t)`,
    `        ELSE
          IF v_g IS DISTINCT FROM v_mg THEN
            v_mg := v_g;
            v_miss := 0;
          END IF;
          IF NOT (v_t = ANY ($1)) THEN
            v_miss := v_miss + 1;
          END IF;
          v_h := NULL;
          IF v_jump AND v_miss >= ${PAIRS_BEFORE_JUMP} THEN
            SELECT x.type INTO v_h FROM unnest($1) AS u (type)
              CROSS JOIN LATERAL (SELECT j.type FROM jobs j WHERE j.state = 'ready' AND j.group_key = v_g AND j.type = u.type AND u.type > v_t LIMIT 1) x
              ORDER BY x.type LIMIT 1;
          END IF;
          IF v_h IS NOT NULL THEN
            SELECT j.group_key, j.type, j.weight, j.run_after <= now() INTO v_g, v_t, v_w, v_due FROM jobs j
              WHERE j.state = 'ready' AND j.group_key = v_g AND j.type = v_h
              ORDER BY j.group_key, j.type, j.priority DESC, j.run_after, j.id LIMIT 1;
          ELSIF v_jump AND v_miss >= ${PAIRS_BEFORE_JUMP} AND $3 IS NULL THEN
            SELECT j.group_key, j.type, j.weight, j.run_after <= now() INTO v_g, v_t, v_w, v_due FROM jobs j
              WHERE j.state = 'ready' AND j.group_key > v_g
              ORDER BY j.group_key, j.type, j.priority DESC, j.run_after, j.id LIMIT 1;
          ELSIF v_jump AND v_miss >= ${PAIRS_BEFORE_JUMP} THEN
            SELECT j.group_key, j.type, j.weight, j.run_after <= now() INTO v_g, v_t, v_w, v_due FROM jobs j
              WHERE j.state = 'ready' AND j.group_key > v_g AND j.group_key < $3
              ORDER BY j.group_key, j.type, j.priority DESC, j.run_after, j.id LIMIT 1;
          ELSIF $3 IS NULL THEN
          SELECT j.group_key, j.type, j.weight, j.run_after <= now() INTO v_g, v_t, v_w, v_due FROM jobs j
            WHERE j.state = 'ready' AND (j.group_key, j.type) > (v_g, v_t)`,
  ),
  // The stepping branches now sit inside the jump's IF: close it.
  `        END IF;\n      END LOOP;\n    END\n`,
  `        END IF;\n        END IF;\n      END LOOP;\n    END\n`,
);

export class JobQueueReadyGroupsJumpPostgres1769900000001 extends JobQueueMigration {
  readonly version = 45;
  readonly name = 'JobQueueReadyGroupsJump1769900000001';
  protected readonly upSql = [READY_GROUPS_SQL_V45];
  protected readonly downSql = [READY_GROUPS_SQL_V32];
}
