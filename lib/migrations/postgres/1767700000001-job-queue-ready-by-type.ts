import { swapText } from '../frozen-text';
import { JobQueueMigration } from '../job-queue-migration';
import { CLAIM_SQL_V4 } from './1764662400000-job-queue-claim-function';
import { READY_GROUPS_SQL_V14 } from './1766500000001-job-queue-ready-groups-plpgsql';
import { CLAIM_ROTATION_SQL_V18 } from './1767400000001-job-queue-rotation-new-visit';

const swap = (text: string, from: string, to: string): string => swapText(21, text, from, to);

const JIT_OFF = (text: string, last: string) => swap(text, `${last}\n    AS $body$`, `${last}\n      SET jit = off\n    AS $body$`);

/** Migration 4's claim with the settings migrations 5 and 14 gave it (CREATE OR REPLACE replaces a function's settings with its own). */
const CLAIM_SQL_V14 = swap(
  CLAIM_SQL_V4.replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION'),
  `SET enable_sort = off\n    AS $body$`,
  `SET enable_sort = off
      SET enable_seqscan = off
      SET enable_mergejoin = off
      SET enable_hashjoin = off
      SET plan_cache_mode = force_generic_plan
    AS $body$`,
);

/**
 * The claim by type: a group's quota and the any-group quota read each type from its own stretch
 * of the ready indexes, at most the limit each, and keep the best. The one Sort left orders the
 * probes' rows, never the ready rows; with enable_sort off its cost is the planner's disable cost,
 * which would JIT-compile every claim, hence jit off.
 */
export const CLAIM_SQL_V21 = JIT_OFF(
  swap(
    swap(
      CLAIM_SQL_V14,
      `      WITH grouped AS (
        SELECT p.id FROM unnest($3, $4) AS q (group_key, lim)
        CROSS JOIN LATERAL (
          SELECT id FROM jobs
          WHERE state = 'ready' AND group_key = q.group_key AND run_after <= now() AND type = ANY ($2)
          ORDER BY group_key, priority DESC, id
          LIMIT q.lim
          FOR UPDATE SKIP LOCKED
        ) p
      ),
      any_group`,
      `      WITH grouped AS (
        SELECT x.id FROM unnest($3, $4) AS q (group_key, lim)
        CROSS JOIN LATERAL (
          SELECT p.id FROM unnest($2) AS t (type)
          CROSS JOIN LATERAL (
            SELECT id, priority FROM jobs
            WHERE state = 'ready' AND group_key = q.group_key AND type = t.type AND run_after <= now()
            ORDER BY group_key, type, priority DESC, id
            LIMIT q.lim
            FOR UPDATE SKIP LOCKED
          ) p
          ORDER BY p.priority DESC, p.id
          LIMIT q.lim
        ) x
      ),
      any_group`,
    ),
    `      any_group AS (
        SELECT id FROM jobs
        WHERE state = 'ready' AND run_after <= now() AND type = ANY ($2)
        ORDER BY priority DESC, id
        LIMIT $5
        FOR UPDATE SKIP LOCKED
      ),
      picked`,
    `      any_group AS (
        SELECT p.id FROM unnest($2) AS t (type)
        CROSS JOIN LATERAL (
          SELECT id, priority FROM jobs
          WHERE state = 'ready' AND type = t.type AND run_after <= now()
          ORDER BY type, priority DESC, id
          LIMIT $5
          FOR UPDATE SKIP LOCKED
        ) p
        WHERE $5 > 0
        ORDER BY p.priority DESC, p.id
        LIMIT $5
      ),
      picked`,
  ),
  'SET plan_cache_mode = force_generic_plan',
);

/** The rotation claim of migration 18, taking a group's share the same way. */
export const CLAIM_ROTATION_SQL_V21 = JIT_OFF(
  swap(
    CLAIM_ROTATION_SQL_V18,
    `      WITH picked AS (
        SELECT p.id FROM unnest(v_q_groups, v_q_limits) AS q (group_key, lim)
        CROSS JOIN LATERAL (
          SELECT j.id FROM jobs j
          WHERE j.state = 'ready' AND j.group_key = q.group_key AND j.run_after <= now() AND j.type = ANY ($2)
          ORDER BY j.group_key, j.priority DESC, j.id
          LIMIT q.lim
          FOR UPDATE SKIP LOCKED
        ) p
      )
      UPDATE`,
    `      WITH picked AS (
        SELECT x.id FROM unnest(v_q_groups, v_q_limits) AS q (group_key, lim)
        CROSS JOIN LATERAL (
          SELECT p.id FROM unnest($2) AS t (type)
          CROSS JOIN LATERAL (
            SELECT j.id, j.priority FROM jobs j
            WHERE j.state = 'ready' AND j.group_key = q.group_key AND j.type = t.type AND j.run_after <= now()
            ORDER BY j.group_key, j.type, j.priority DESC, j.id
            LIMIT q.lim
            FOR UPDATE SKIP LOCKED
          ) p
          ORDER BY p.priority DESC, p.id
          LIMIT q.lim
        ) x
      )
      UPDATE`,
  ),
  'SET enable_hashjoin = off',
);

/**
 * The groups with claimable jobs of these types, walked by (group, type) pairs: one probe per
 * pair, so the walk steps over another type's rows in a group whatever their number (before, it
 * read them one by one, filtering by type). Each group's weight is that of the next job of the
 * first of these types found in it.
 */
export const READY_GROUPS_SQL_V21 = `CREATE OR REPLACE FUNCTION job_queue_ready_groups(text[], text, text, int)
      RETURNS TABLE (group_key text, weight int, n int)
      LANGUAGE plpgsql STABLE
      SET enable_bitmapscan = off
      SET enable_sort = off
      SET enable_seqscan = off
    AS $body$
    DECLARE
      v_g text;
      v_t text;
      v_w int;
      v_n int := 0;
    BEGIN
      SELECT j.group_key, j.type INTO v_g, v_t FROM jobs j
        WHERE j.state = 'ready' AND j.group_key >= $2 AND ($3 IS NULL OR j.group_key < $3)
        ORDER BY j.group_key, j.type LIMIT 1;
      WHILE FOUND AND v_n < $4 LOOP
        v_w := NULL;
        IF v_t = ANY ($1) THEN
          SELECT j.weight INTO v_w FROM jobs j
            WHERE j.state = 'ready' AND j.group_key = v_g AND j.type = v_t AND j.run_after <= now()
            ORDER BY j.group_key, j.type, j.priority DESC, j.id LIMIT 1;
        END IF;
        IF v_w IS NOT NULL THEN
          v_n := v_n + 1;
          group_key := v_g; weight := v_w; n := v_n;
          RETURN NEXT;
          SELECT j.group_key, j.type INTO v_g, v_t FROM jobs j
            WHERE j.state = 'ready' AND j.group_key > v_g AND ($3 IS NULL OR j.group_key < $3)
            ORDER BY j.group_key, j.type LIMIT 1;
        ELSE
          SELECT j.group_key, j.type INTO v_g, v_t FROM jobs j
            WHERE j.state = 'ready' AND (j.group_key, j.type) > (v_g, v_t) AND ($3 IS NULL OR j.group_key < $3)
            ORDER BY j.group_key, j.type LIMIT 1;
        END IF;
      END LOOP;
    END
    $body$`;

/**
 * The ready index by type: `jobs_ready_idx` becomes (type, priority DESC, id) over ready rows, and
 * `job_queue_claim` reads each of the worker's types from its own stretch of it (a LATERAL probe
 * per type, at most $5 rows each, the best $5 of all kept). Before, the claim walked the ready
 * index in priority order and filtered by type, so a worker that handles some of the types read
 * every ready row of the others ahead of its own: with a million ready jobs of a type it does not
 * handle, 390 ms per claim and 200 times the drain time (bench scenario scan-cost, case d).
 *
 * The indexes keep their names so that the hints of processes still on the previous version
 * (MySQL's FORCE INDEX, SQLite's INDEXED BY) find it during a rolling upgrade. On a large table,
 * build the indexes first, without blocking writes, and this migration then only swaps names:
 *   CREATE INDEX CONCURRENTLY jobs_ready_type_idx ON jobs (type, priority DESC, id) WHERE state = 'ready';
 *   CREATE INDEX CONCURRENTLY jobs_ready_group_type_idx ON jobs (group_key, type, priority DESC, id) WHERE state = 'ready';
 *
 * `jobs_ready_group_idx` becomes (group_key, type, priority DESC, id) the same way: it serves the
 * walk of the groups that have claimable jobs of a worker's types (the slot planner's, every
 * 250 ms while busy, and the rotation's) by (group, type) pairs, and a group's quota (claim and
 * rotation), each type from its own stretch.
 */
export class JobQueueReadyByTypePostgres1767700000001 extends JobQueueMigration {
  readonly version = 21;
  readonly name = 'JobQueueReadyByType1767700000001';
  protected readonly upSql = [
    `CREATE INDEX IF NOT EXISTS jobs_ready_type_idx ON jobs (type, priority DESC, id) WHERE state = 'ready'`,
    `CREATE INDEX IF NOT EXISTS jobs_ready_group_type_idx ON jobs (group_key, type, priority DESC, id) WHERE state = 'ready'`,
    `DROP INDEX jobs_ready_group_idx`,
    `ALTER INDEX jobs_ready_group_type_idx RENAME TO jobs_ready_group_idx`,
    `DROP INDEX jobs_ready_idx`,
    `ALTER INDEX jobs_ready_type_idx RENAME TO jobs_ready_idx`,
    CLAIM_SQL_V21,
    READY_GROUPS_SQL_V21,
    CLAIM_ROTATION_SQL_V21,
  ];
  protected readonly downSql = [
    CLAIM_ROTATION_SQL_V18,
    READY_GROUPS_SQL_V14,
    `CREATE INDEX jobs_ready_group_priority_idx ON jobs (group_key, priority DESC, id) WHERE state = 'ready'`,
    `DROP INDEX jobs_ready_group_idx`,
    `ALTER INDEX jobs_ready_group_priority_idx RENAME TO jobs_ready_group_idx`,
    CLAIM_SQL_V14,
    `CREATE INDEX jobs_ready_priority_idx ON jobs (priority DESC, id) WHERE state = 'ready'`,
    `DROP INDEX jobs_ready_idx`,
    `ALTER INDEX jobs_ready_priority_idx RENAME TO jobs_ready_idx`,
  ];
}
