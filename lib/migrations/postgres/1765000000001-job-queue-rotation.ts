import { JobQueueMigration } from '../job-queue-migration';

/**
 * The walk: up to $4 groups with claimable jobs from $2 (inclusive) and below $3 (if not
 * null), in group index order, each with its next job's weight. One statement, a recursive
 * loose index scan whose every step is an ORDER BY … LIMIT 1 read of the ready group index
 * (not MIN: on a table not analyzed yet the planner aggregates every ready row for it).
 * Migration 14 redefines it in PL/pgSQL; its down step restores this one.
 */
export const READY_GROUPS_SQL_V7 = `CREATE FUNCTION job_queue_ready_groups(text[], text, text, int)
      RETURNS TABLE (group_key text, weight int, n int)
      LANGUAGE sql STABLE
      SET enable_bitmapscan = off
    AS $body$
      WITH RECURSIVE walk (group_key, weight, n) AS (
        (SELECT j.group_key::text, j.weight, 1 FROM jobs j
          WHERE j.state = 'ready' AND j.run_after <= now() AND j.type = ANY ($1)
            AND j.group_key >= $2 AND ($3 IS NULL OR j.group_key < $3)
          ORDER BY j.group_key, j.priority DESC, j.id LIMIT 1)
        UNION ALL
        SELECT nx.group_key::text, nx.weight, w.n + 1 FROM walk w
        CROSS JOIN LATERAL (
          SELECT j.group_key, j.weight FROM jobs j
          WHERE j.state = 'ready' AND j.run_after <= now() AND j.type = ANY ($1)
            AND j.group_key > w.group_key AND ($3 IS NULL OR j.group_key < $3)
          ORDER BY j.group_key, j.priority DESC, j.id LIMIT 1
        ) nx
        WHERE w.n < $4
      )
      SELECT group_key, weight, n FROM walk
    $body$`;

/**
 * The rotation claim as one function call (the same plan as lib/claim/rotation.claim.ts,
 * which the other dialects and capped claims use). Migration 18 replaces it; its down step
 * restores this one.
 */
export const CLAIM_ROTATION_SQL_V7 = `CREATE FUNCTION job_queue_claim_rotation(text, text[], int, float8, boolean, text[], int[])
      RETURNS SETOF jobs
      LANGUAGE plpgsql VOLATILE
      SET enable_bitmapscan = off
      SET enable_sort = off
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
        CONTINUE WHEN v_take <= 0;
        v_q_groups := v_q_groups || v_groups[i];
        v_q_limits := v_q_limits || v_take;
        v_left := v_left - v_take;
        v_last := v_groups[i];
        v_last_served := v_already + v_take;
      END LOOP;
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

export class JobQueueRotationPostgres1765000000001 extends JobQueueMigration {
  readonly version = 7;
  readonly name = 'JobQueueRotation1765000000001';
  protected readonly upSql = [
    // The fair-share rotation cursor shared by every worker process: the group being served and
    // how many slots it got in this visit. With more ready groups than slots, claims walk the
    // ready group index from here, so every group is visited once per round whatever its key.
    `CREATE TABLE job_queue_rotation (
      name varchar(64) PRIMARY KEY,
      group_key varchar(200) NOT NULL DEFAULT '',
      served integer NOT NULL DEFAULT 0
    )`,
    `INSERT INTO job_queue_rotation (name) VALUES ('fair-share')`,
    READY_GROUPS_SQL_V7,
    // The rotation claim as one function call (the same plan as lib/claim/rotation.claim.ts,
    // which the other dialects and capped claims use): lock the cursor, walk the groups that
    // follow it (wrapping round to the first), give each its weight in slots, continuing a
    // visit the last claim left unfinished, lock those jobs with SKIP LOCKED, move the cursor,
    // lease. Four statements whatever the number of groups.
    // $1 owner, $2 types, $3 slots, $4 lease TTL ms, $5 start, $6/$7 group weights from options.
    CLAIM_ROTATION_SQL_V7,
  ];
  protected readonly downSql = [
    `DROP FUNCTION job_queue_claim_rotation(text, text[], int, float8, boolean, text[], int[])`,
    `DROP FUNCTION job_queue_ready_groups(text[], text, text, int)`,
    `DROP TABLE job_queue_rotation`,
  ];
}
