import { JobQueueMigration } from '../job-queue-migration';

/**
 * The ready index by type: `jobs_ready_idx` becomes (type, priority DESC, id) over ready rows, and
 * `job_queue_claim` reads each of the worker's types from its own stretch of it (a LATERAL probe
 * per type, at most $5 rows each, the best $5 of all kept). Before, the claim walked the ready
 * index in priority order and filtered by type, so a worker that handles some of the types read
 * every ready row of the others ahead of its own: with a million ready jobs of a type it does not
 * handle, 390 ms per claim and 200 times the drain time (bench scenario scan-cost, case d).
 *
 * The index keeps its name so that the hints of processes still on the previous version
 * (MySQL's FORCE INDEX, SQLite's INDEXED BY) find it during a rolling upgrade. On a large table,
 * build the index first, without blocking writes, and this migration then only swaps names:
 *   CREATE INDEX CONCURRENTLY jobs_ready_type_idx ON jobs (type, priority DESC, id) WHERE state = 'ready';
 */
export class JobQueueReadyByTypePostgres1767700000001 extends JobQueueMigration {
  readonly version = 21;
  readonly name = 'JobQueueReadyByType1767700000001';
  protected readonly upSql = [
    `CREATE INDEX IF NOT EXISTS jobs_ready_type_idx ON jobs (type, priority DESC, id) WHERE state = 'ready'`,
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
  ];
  protected readonly downSql = [
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
