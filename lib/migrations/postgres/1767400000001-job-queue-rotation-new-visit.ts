import { JobQueueMigration } from '../job-queue-migration';
import { CLAIM_ROTATION_SQL_V7 } from './1765000000001-job-queue-rotation';

const SIGNATURE = 'job_queue_claim_rotation(text, text[], int, float8, boolean, text[], int[])';

/**
 * The rotation claim gives a new visit to the cursor's group when its visit is complete and
 * the walk came back round to it with slots left. Before, a lone ready group whose visit was
 * complete got nothing: an idle worker woken for the next job of that group claimed nothing
 * and waited for its poll (test/integration/listen-notify caught it under load, always on the
 * second job). The plan is lib/claim/rotation-plan.ts's, which the other dialects run.
 * Migration 14's plan settings are part of the definition, since CREATE OR REPLACE resets them.
 */
/** The rotation claim as this migration defines it (migration 21 replaces it; its down step restores this). */
export const CLAIM_ROTATION_SQL_V18 = `CREATE OR REPLACE FUNCTION job_queue_claim_rotation(text, text[], int, float8, boolean, text[], int[])
      RETURNS SETOF jobs
      LANGUAGE plpgsql VOLATILE
      SET enable_bitmapscan = off
      SET enable_sort = off
      SET enable_mergejoin = off
      SET enable_hashjoin = off
    AS $body$
    DECLARE
      v_cur text;
      v_served int;
      v_groups text[];
      v_weights int[];
      v_more_groups text[];
      v_more_weights int[];
      v_q_groups text[] := '{}';
      v_q_limits int[] := '{}';
      v_weight int;
      v_already int;
      v_take int;
      v_left int := $3;
      v_last text;
      v_last_served int;
      v_completed int;
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      SELECT r.group_key, r.served INTO v_cur, v_served FROM job_queue_rotation r WHERE r.name = 'fair-share' FOR UPDATE;
      IF NOT FOUND THEN v_cur := ''; v_served := 0; END IF;
      v_last := v_cur;
      v_last_served := v_served;
      -- One more group than slots: the cursor's own group may have had its whole visit.
      SELECT coalesce(array_agg(g.group_key ORDER BY g.n), '{}'), coalesce(array_agg(g.weight ORDER BY g.n), '{}')
        INTO v_groups, v_weights FROM job_queue_ready_groups($2, v_cur, NULL, $3 + 1) g;
      IF cardinality(v_groups) < $3 + 1 THEN
        SELECT coalesce(array_agg(g.group_key ORDER BY g.n), '{}'), coalesce(array_agg(g.weight ORDER BY g.n), '{}')
          INTO v_more_groups, v_more_weights
          FROM job_queue_ready_groups($2, '', v_groups[1], $3 + 1 - cardinality(v_groups)) g;
        v_groups := v_groups || v_more_groups;
        v_weights := v_weights || v_more_weights;
      END IF;
      FOR i IN 1 .. cardinality(v_groups) LOOP
        EXIT WHEN v_left <= 0;
        v_weight := greatest(coalesce($7[array_position($6, v_groups[i])], v_weights[i], 1), 1);
        v_already := CASE WHEN v_groups[i] = v_cur THEN v_served ELSE 0 END;
        v_take := least(v_weight - v_already, v_left);
        IF v_take <= 0 THEN
          v_completed := i;
          CONTINUE;
        END IF;
        v_q_groups := v_q_groups || v_groups[i];
        v_q_limits := v_q_limits || v_take;
        v_left := v_left - v_take;
        v_last := v_groups[i];
        v_last_served := v_already + v_take;
      END LOOP;
      -- Slots left: the walk held every ready group, so the round is back at the cursor's
      -- group, whose completed visit is followed by a new one (see planRotation).
      IF v_left > 0 AND v_completed IS NOT NULL AND NOT (v_groups[v_completed] = ANY (v_q_groups)) THEN
        v_take := least(greatest(coalesce($7[array_position($6, v_groups[v_completed])], v_weights[v_completed], 1), 1), v_left);
        v_q_groups := v_q_groups || v_groups[v_completed];
        v_q_limits := v_q_limits || v_take;
        v_left := v_left - v_take;
        v_last := v_groups[v_completed];
        v_last_served := v_take;
      END IF;
      IF v_last IS DISTINCT FROM v_cur OR v_last_served <> v_served THEN
        UPDATE job_queue_rotation SET group_key = v_last, served = v_last_served WHERE name = 'fair-share';
      END IF;
      RETURN QUERY
      WITH picked AS (
        SELECT p.id FROM unnest(v_q_groups, v_q_limits) AS q (group_key, lim)
        CROSS JOIN LATERAL (
          SELECT j.id FROM jobs j
          WHERE j.state = 'ready' AND j.group_key = q.group_key AND j.run_after <= now() AND j.type = ANY ($2)
          ORDER BY j.group_key, j.priority DESC, j.id
          LIMIT q.lim
          FOR UPDATE SKIP LOCKED
        ) p
      )
      UPDATE jobs SET
        state = CASE WHEN $5 THEN 'running' ELSE 'leased' END,
        lease_owner = $1,
        lease_expires = now() + $4 * interval '1 millisecond',
        heartbeat_at = now(),
        attempts = jobs.attempts + 1,
        started_at = CASE WHEN $5 THEN now() ELSE jobs.started_at END,
        updated_at = now()
      FROM picked WHERE jobs.id = picked.id
      RETURNING jobs.*;
    END
    $body$`;

export class JobQueueRotationNewVisitPostgres1767400000001 extends JobQueueMigration {
  readonly version = 18;
  readonly name = 'JobQueueRotationNewVisit1767400000001';
  protected readonly upSql = [
    CLAIM_ROTATION_SQL_V18,
  ];
  protected readonly downSql = [
    CLAIM_ROTATION_SQL_V7.replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION'),
    `ALTER FUNCTION ${SIGNATURE} SET enable_mergejoin = off`,
    `ALTER FUNCTION ${SIGNATURE} SET enable_hashjoin = off`,
  ];
}
