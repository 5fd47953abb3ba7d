import { JobQueueMigration } from '../job-queue-migration';
import { READY_GROUPS_SQL_V21 } from './1767700000001-job-queue-ready-by-type';

/**
 * The walk of ready groups stops at its end bound. `$3` (where the rotation's wrap-around walk
 * stops: the first group the walk from the cursor took) was a filter, `$3 IS NULL OR group_key <
 * $3`, which the index scan cannot stop at: once the groups below the bound were taken, the next
 * probe read every ready entry from the bound to the end of the index and filtered each out. A
 * rotation claim wraps round whenever fewer groups than slots lie after the cursor, as when a
 * worker starts or wakes to a backlog of a few groups: with 300,000 ready jobs in three groups
 * that probe took 21 ms, and the claim 29 ms. The bound is now an index bound (one statement per
 * case), and the probe reads two or three buffers whatever the backlog.
 *
 * A pair's first probe also reads its first job (in index order, the one the claim would take
 * first) with its weight and whether it is due; the weight's own probe runs only when that job is
 * not due yet. The result is the same: the same groups, in the same order, with the weight of each
 * group's next due job of the first of the types found in it.
 */
export const READY_GROUPS_SQL_V25 = `CREATE OR REPLACE FUNCTION job_queue_ready_groups(text[], text, text, int)
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
      v_due boolean;
      v_n int := 0;
    BEGIN
      IF $3 IS NULL THEN
        SELECT j.group_key, j.type, j.weight, j.run_after <= now() INTO v_g, v_t, v_w, v_due FROM jobs j
          WHERE j.state = 'ready' AND j.group_key >= $2
          ORDER BY j.group_key, j.type, j.priority DESC, j.id LIMIT 1;
      ELSE
        SELECT j.group_key, j.type, j.weight, j.run_after <= now() INTO v_g, v_t, v_w, v_due FROM jobs j
          WHERE j.state = 'ready' AND j.group_key >= $2 AND j.group_key < $3
          ORDER BY j.group_key, j.type, j.priority DESC, j.id LIMIT 1;
      END IF;
      WHILE FOUND AND v_n < $4 LOOP
        IF NOT (v_t = ANY ($1)) THEN
          v_w := NULL;
        ELSIF NOT v_due THEN
          v_w := NULL;
          SELECT j.weight INTO v_w FROM jobs j
            WHERE j.state = 'ready' AND j.group_key = v_g AND j.type = v_t AND j.run_after <= now()
            ORDER BY j.group_key, j.type, j.priority DESC, j.id LIMIT 1;
        END IF;
        IF v_w IS NOT NULL THEN
          v_n := v_n + 1;
          group_key := v_g; weight := v_w; n := v_n;
          RETURN NEXT;
          EXIT WHEN v_n >= $4;
          IF $3 IS NULL THEN
            SELECT j.group_key, j.type, j.weight, j.run_after <= now() INTO v_g, v_t, v_w, v_due FROM jobs j
              WHERE j.state = 'ready' AND j.group_key > v_g
              ORDER BY j.group_key, j.type, j.priority DESC, j.id LIMIT 1;
          ELSE
            SELECT j.group_key, j.type, j.weight, j.run_after <= now() INTO v_g, v_t, v_w, v_due FROM jobs j
              WHERE j.state = 'ready' AND j.group_key > v_g AND j.group_key < $3
              ORDER BY j.group_key, j.type, j.priority DESC, j.id LIMIT 1;
          END IF;
        ELSIF $3 IS NULL THEN
          SELECT j.group_key, j.type, j.weight, j.run_after <= now() INTO v_g, v_t, v_w, v_due FROM jobs j
            WHERE j.state = 'ready' AND (j.group_key, j.type) > (v_g, v_t)
            ORDER BY j.group_key, j.type, j.priority DESC, j.id LIMIT 1;
        ELSE
          SELECT j.group_key, j.type, j.weight, j.run_after <= now() INTO v_g, v_t, v_w, v_due FROM jobs j
            WHERE j.state = 'ready' AND (j.group_key, j.type) > (v_g, v_t) AND j.group_key < $3
            ORDER BY j.group_key, j.type, j.priority DESC, j.id LIMIT 1;
        END IF;
      END LOOP;
    END
    $body$`;

export class JobQueueReadyGroupsBoundedPostgres1768000000001 extends JobQueueMigration {
  readonly version = 25;
  readonly name = 'JobQueueReadyGroupsBounded1768000000001';
  protected readonly upSql = [READY_GROUPS_SQL_V25];
  protected readonly downSql = [READY_GROUPS_SQL_V21];
}
