import { NOTIFY_CHANNEL, SETTLED_CHANNEL } from '../../notify/notify.sql';
import { JobQueueMigration } from '../job-queue-migration';

/** The view columns a 'view' row carries, as lib/database/job-row.ts selects them, with their types. */
const VIEW_COLUMNS: ReadonlyArray<[string, string]> = [
  ['id', 'bigint'], ['type', 'varchar'], ['ref', 'varchar'], ['args', 'text'], ['result', 'text'], ['state', 'varchar'],
  ['parent_id', 'bigint'], ['is_container', 'smallint'], ['group_key', 'varchar'], ['weight', 'integer'], ['priority', 'integer'],
  ['attempts', 'integer'], ['max_attempts', 'integer'], ['last_error', 'text'], ['timeout_ms', 'integer'], ['progress', 'smallint'],
  ['current_stage', 'varchar'], ['job_key', 'varchar'], ['lease_owner', 'varchar'], ['run_after', 'timestamptz'],
  ['created_at', 'timestamptz'], ['started_at', 'timestamptz'], ['finished_at', 'timestamptz'], ['updated_at', 'timestamptz'],
  ['lease_expires', 'timestamptz'],
];
export const NULLS = VIEW_COLUMNS.map(() => 'NULL').join(', ');

/** The complete that returns views, as this migration adds it (migration 22 derives from it). */
export const COMPLETE_VIEWS_SQL_V20 = `CREATE FUNCTION job_queue_complete_views(text, bigint[], text[], boolean, text[])
      RETURNS TABLE (kind text, job bigint, ${VIEW_COLUMNS.map(([c, t]) => `${c} ${t}`).join(', ')})
      LANGUAGE plpgsql VOLATILE
      SET plan_cache_mode = force_generic_plan
      SET enable_seqscan = off
    AS $body$
    #variable_conflict use_column
    BEGIN
      RETURN QUERY
      WITH v AS (SELECT * FROM unnest($2, $3, $5) AS u (id, result, carrier)),
      done AS (
        UPDATE jobs SET result = v.result, trace_context = COALESCE(v.carrier, jobs.trace_context), state = 'done', progress = 100,
          finished_at = now(), lease_owner = NULL, lease_expires = NULL, updated_at = now()
        FROM v
        WHERE jobs.id = v.id AND jobs.lease_owner = $1 AND jobs.state || '' = 'running'
        RETURNING jobs.*),
      dep AS (
        SELECT d.job_id, COUNT(*) AS n FROM job_deps d JOIN done ON d.depends_on_id = done.id GROUP BY d.job_id),
      promoted AS (
        UPDATE jobs j SET state = CASE WHEN j.state = 'waiting' AND j.is_container = 0 AND j.pending_deps - dep.n <= 0 THEN 'ready' ELSE j.state END,
          pending_deps = j.pending_deps - dep.n, updated_at = now()
        FROM dep WHERE j.id = dep.job_id
        RETURNING j.id, j.state),
      woken AS (
        SELECT pg_notify('${NOTIFY_CHANNEL}', 'r') FROM (SELECT 1 FROM promoted p WHERE p.state = 'ready' AND $4 LIMIT 1) p),
      told AS (
        SELECT pg_notify('${SETTLED_CHANNEL}', string_agg(s.id::text, ',')) FROM (
          SELECT done.id, (row_number() OVER ()) / 390 AS part FROM done WHERE $4) s GROUP BY s.part)
      SELECT 'view'::text, d.id, ${VIEW_COLUMNS.map(([c]) => `d.${c}`).join(', ')} FROM done d
      UNION ALL SELECT 'refused'::text, v.id, ${NULLS} FROM v WHERE NOT EXISTS (SELECT 1 FROM done WHERE done.id = v.id)
      UNION ALL SELECT 'promoted'::text, COUNT(*), ${NULLS} FROM promoted p WHERE p.state = 'ready'
      UNION ALL SELECT 'notified'::text, NULL::bigint, ${NULLS} FROM woken
      UNION ALL SELECT 'told'::text, COUNT(*), ${NULLS} FROM told;
    END
    $body$`;

/**
 * Events: `job_queue_complete_views`, migration 15's complete (carriers may be NULL) that also
 * returns a 'view' row per job it completed, the row as written, so that a `completed` listener's
 * view needs no read after the commit. A function, like the complete it extends: as an ad-hoc
 * statement around the complete (parsed and planned per finalize batch of a few jobs) it cost more
 * PostgreSQL CPU per job than the batched read it replaced.
 */
export class JobQueueCompleteViewsPostgres1767500000002 extends JobQueueMigration {
  readonly version = 20;
  readonly name = 'JobQueueCompleteViews1767500000002';
  protected readonly upSql = [
    COMPLETE_VIEWS_SQL_V20,
  ];
  protected readonly downSql = [`DROP FUNCTION job_queue_complete_views(text, bigint[], text[], boolean, text[])`];
}
