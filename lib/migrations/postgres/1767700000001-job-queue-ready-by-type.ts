import { JobQueueMigration } from '../job-queue-migration';

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
    // The settings are those migrations 5 and 14 gave the claim (CREATE OR REPLACE replaces them).
    // The one Sort left orders the probes' rows (at most $5 per type), never the ready rows; with
    // enable_sort off its cost is the planner's disable cost, which would JIT-compile every claim.
    // $1 owner, $2 types, $3 groups, $4 per-group limits, $5 any-group limit, $6 lease TTL ms, $7 start.
    `CREATE OR REPLACE FUNCTION job_queue_claim(text, text[], text[], int[], int, float8, boolean)
      RETURNS SETOF jobs
      LANGUAGE plpgsql VOLATILE
      SET enable_bitmapscan = off
      SET enable_sort = off
      SET enable_seqscan = off
      SET enable_mergejoin = off
      SET enable_hashjoin = off
      SET plan_cache_mode = force_generic_plan
      SET jit = off
    AS $body$
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      RETURN QUERY
      WITH grouped AS (
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
      any_group AS (
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
      picked AS (SELECT id FROM grouped UNION SELECT id FROM any_group)
      UPDATE jobs SET
        state = CASE WHEN $7 THEN 'running' ELSE 'leased' END,
        lease_owner = $1,
        lease_expires = now() + $6 * interval '1 millisecond',
        heartbeat_at = now(),
        attempts = jobs.attempts + 1,
        started_at = CASE WHEN $7 THEN now() ELSE jobs.started_at END,
        updated_at = now()
      FROM picked WHERE jobs.id = picked.id
      RETURNING jobs.*;
    END
    $body$`,
    // The groups with claimable jobs of these types, walked by (group, type) pairs: one probe per
    // pair, so the walk steps over another type's rows in a group whatever their number (before,
    // it read them one by one, filtering by type). Each group's weight is that of the next job of
    // the first of these types found in it.
    `CREATE OR REPLACE FUNCTION job_queue_ready_groups(text[], text, text, int)
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
    $body$`,
    // The rotation claim takes a group's share the same way: each type from its own stretch of the
    // (group, type) ready index. Migration 18's function otherwise, with its settings.
    `CREATE OR REPLACE FUNCTION job_queue_claim_rotation(text, text[], int, float8, boolean, text[], int[])
      RETURNS SETOF jobs
      LANGUAGE plpgsql VOLATILE
      SET enable_bitmapscan = off
      SET enable_sort = off
      SET enable_mergejoin = off
      SET enable_hashjoin = off
      SET jit = off
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
    $body$`,
  ];
  protected readonly downSql = [
    // Migration 18's rotation claim and migration 14's walk.
    `CREATE OR REPLACE FUNCTION job_queue_claim_rotation(text, text[], int, float8, boolean, text[], int[])
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
    $body$`,
    `CREATE OR REPLACE FUNCTION job_queue_ready_groups(text[], text, text, int)
      RETURNS TABLE (group_key text, weight int, n int)
      LANGUAGE plpgsql STABLE
      SET enable_bitmapscan = off
    AS $body$
    BEGIN
      RETURN QUERY
      WITH RECURSIVE walk (g, w, k) AS (
        (SELECT j.group_key::text, j.weight, 1 FROM jobs j
          WHERE j.state = 'ready' AND j.run_after <= now() AND j.type = ANY ($1)
            AND j.group_key >= $2 AND ($3 IS NULL OR j.group_key < $3)
          ORDER BY j.group_key, j.priority DESC, j.id LIMIT 1)
        UNION ALL
        SELECT nx.group_key::text, nx.weight, walk.k + 1 FROM walk
        CROSS JOIN LATERAL (
          SELECT j.group_key, j.weight FROM jobs j
          WHERE j.state = 'ready' AND j.run_after <= now() AND j.type = ANY ($1)
            AND j.group_key > walk.g AND ($3 IS NULL OR j.group_key < $3)
          ORDER BY j.group_key, j.priority DESC, j.id LIMIT 1
        ) nx
        WHERE walk.k < $4
      )
      SELECT walk.g, walk.w, walk.k FROM walk;
    END
    $body$`,
    `CREATE INDEX jobs_ready_group_priority_idx ON jobs (group_key, priority DESC, id) WHERE state = 'ready'`,
    `DROP INDEX jobs_ready_group_idx`,
    `ALTER INDEX jobs_ready_group_priority_idx RENAME TO jobs_ready_group_idx`,
    // Migration 4's claim, with the settings migrations 5 and 14 gave it (CREATE OR REPLACE
    // replaces a function's settings with its own).
    `CREATE OR REPLACE FUNCTION job_queue_claim(text, text[], text[], int[], int, float8, boolean)
      RETURNS SETOF jobs
      LANGUAGE plpgsql VOLATILE
      SET enable_bitmapscan = off
      SET enable_sort = off
      SET enable_seqscan = off
      SET enable_mergejoin = off
      SET enable_hashjoin = off
      SET plan_cache_mode = force_generic_plan
    AS $body$
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      RETURN QUERY
      WITH grouped AS (
        SELECT p.id FROM unnest($3, $4) AS q (group_key, lim)
        CROSS JOIN LATERAL (
          SELECT id FROM jobs
          WHERE state = 'ready' AND group_key = q.group_key AND run_after <= now() AND type = ANY ($2)
          ORDER BY group_key, priority DESC, id
          LIMIT q.lim
          FOR UPDATE SKIP LOCKED
        ) p
      ),
      any_group AS (
        SELECT id FROM jobs
        WHERE state = 'ready' AND run_after <= now() AND type = ANY ($2)
        ORDER BY priority DESC, id
        LIMIT $5
        FOR UPDATE SKIP LOCKED
      ),
      picked AS (SELECT id FROM grouped UNION SELECT id FROM any_group)
      UPDATE jobs SET
        state = CASE WHEN $7 THEN 'running' ELSE 'leased' END,
        lease_owner = $1,
        lease_expires = now() + $6 * interval '1 millisecond',
        heartbeat_at = now(),
        attempts = jobs.attempts + 1,
        started_at = CASE WHEN $7 THEN now() ELSE jobs.started_at END,
        updated_at = now()
      FROM picked WHERE jobs.id = picked.id
      RETURNING jobs.*;
    END
    $body$`,
    `CREATE INDEX jobs_ready_priority_idx ON jobs (priority DESC, id) WHERE state = 'ready'`,
    `DROP INDEX jobs_ready_idx`,
    `ALTER INDEX jobs_ready_priority_idx RENAME TO jobs_ready_idx`,
  ];
}
