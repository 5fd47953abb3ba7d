import { swapSpan, swapText } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { READY_GROUPS_SQL_V45 } from './1769900000001-job-queue-ready-groups-jump';

const swap = (text: string, from: string, to: string): string => swapText(46, text, from, to);

/** Pairs of other types a walk steps over in a row before it jumps; a jump probes each handled type once. */
const PAIRS_BEFORE_JUMP = 4;

/** The step to the next pair of ready rows in (group, type) order, below $3 where given. */
const step = (below: string) => `SELECT j.group_key, j.type, j.weight, j.run_after <= now() INTO v_g, v_t, v_w, v_due FROM jobs j
              WHERE j.state = 'ready' AND (j.group_key, j.type) > (v_g, v_t)${below}
              ORDER BY j.group_key, j.type, j.priority DESC, j.run_after, j.id LIMIT 1;`;

/** The pair the jump found, or the next one (a claim may have taken its rows since). */
const land = (below: string) => `SELECT j.group_key, j.type, j.weight, j.run_after <= now() INTO v_g, v_t, v_w, v_due FROM jobs j
                WHERE j.state = 'ready' AND (j.group_key, j.type) >= (v_hg, v_h)${below}
                ORDER BY j.group_key, j.type, j.priority DESC, j.run_after, j.id LIMIT 1;`;

/**
 * The jump: per handled type, its next pair from the (type, group) index (in this group if the
 * type sorts after the current one, else in a later group), the first of them in (group, type)
 * order. The first arm's condition on u.type alone is a one-time filter, so a type that cannot
 * come next in this group reads nothing there (not its backlog in the group).
 */
const jump = (below: string) => `SELECT x.group_key, u.type INTO v_hg, v_h FROM unnest($1) AS u (type)
                CROSS JOIN LATERAL (
                  (SELECT j.group_key FROM jobs j WHERE j.state = 'ready' AND j.type = u.type AND j.group_key = v_g AND u.type > v_t LIMIT 1)
                  UNION ALL
                  (SELECT j.group_key FROM jobs j WHERE j.state = 'ready' AND j.type = u.type AND j.group_key > v_g${below}
                    ORDER BY j.type, j.group_key LIMIT 1)
                  LIMIT 1) x
                ORDER BY x.group_key, u.type LIMIT 1;`;

/**
 * The walk of ready groups (migration 45's text) jumps past other workers' types across groups
 * too, through the new index `jobs_ready_type_group_idx`. Migration 45 jumped within a group
 * only: a group per other worker's tenant still cost a probe each (20,000 of them: a planner look
 * of 155 ms, a rotation claim of 160 ms holding the cursor's lock). After a few pairs of other
 * types in a row, in one group or across several, the walk now goes straight to the next pair of
 * a handled type, wherever it is.
 */
export const READY_GROUPS_SQL_V46 = swapSpan(
  46,
  swap(READY_GROUPS_SQL_V45, `      v_h text;\n      v_mg text;\n`, `      v_h text;\n      v_hg text;\n`),
  `        ELSE\n          IF v_g IS DISTINCT FROM v_mg THEN\n`,
  `        END IF;\n        END IF;\n      END LOOP;\n`,
  `        ELSE
          IF NOT (v_t = ANY ($1)) THEN
            v_miss := v_miss + 1;
          ELSE
            v_miss := 0;
          END IF;
          IF v_jump AND v_miss >= ${PAIRS_BEFORE_JUMP} THEN
            v_miss := 0;
            IF $3 IS NULL THEN
              ${jump('')}
              EXIT WHEN v_h IS NULL; -- nothing of a handled type ahead
              ${land('')}
            ELSE
              ${jump(' AND j.group_key < $3')}
              EXIT WHEN v_h IS NULL; -- nothing of a handled type ahead
              ${land(' AND j.group_key < $3')}
            END IF;
          ELSIF $3 IS NULL THEN
            ${step('')}
          ELSE
            ${step(' AND j.group_key < $3')}
          END IF;
        END IF;
      END LOOP;
`,
);

/**
 * The ready rows in (type, group) order, for the walk of ready groups to jump past the groups
 * that hold none of a worker's types: per type, the next group that holds it is one index entry.
 *
 * On a large table, build it beforehand without blocking writes:
 *   CREATE INDEX CONCURRENTLY jobs_ready_type_group_idx ON jobs (type, group_key) WHERE state = 'ready';
 * (IF NOT EXISTS then skips it here.)
 */
export class JobQueueReadyTypeGroupIndexPostgres1770000000001 extends JobQueueMigration {
  readonly version = 46;
  readonly name = 'JobQueueReadyTypeGroupIndex1770000000001';
  protected readonly upSql = [`CREATE INDEX IF NOT EXISTS jobs_ready_type_group_idx ON jobs (type, group_key) WHERE state = 'ready'`, READY_GROUPS_SQL_V46];
  protected readonly downSql = [READY_GROUPS_SQL_V45, `DROP INDEX IF EXISTS jobs_ready_type_group_idx`];
}
