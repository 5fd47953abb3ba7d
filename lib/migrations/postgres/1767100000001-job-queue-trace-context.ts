import { NOTIFY_CHANNEL, SETTLED_CHANNEL } from '../../notify/notify.sql';
import { JobQueueMigration } from '../job-queue-migration';

/** The five-argument (traced) complete this migration adds (migration 22 derives from it). */
export const COMPLETE_TRACED_SQL_V15 = `CREATE FUNCTION job_queue_complete(text, bigint[], text[], boolean, text[])
      RETURNS TABLE (kind text, job bigint)
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
        RETURNING jobs.id),
      dep AS (
        SELECT d.job_id, COUNT(*) AS n FROM job_deps d JOIN done ON d.depends_on_id = done.id GROUP BY d.job_id),
      promoted AS (
        UPDATE jobs j SET state = CASE WHEN j.state = 'waiting' AND j.is_container = 0 AND j.pending_deps - dep.n <= 0 THEN 'ready' ELSE j.state END,
          pending_deps = j.pending_deps - dep.n, updated_at = now()
        FROM dep WHERE j.id = dep.job_id
        RETURNING j.id, j.state),
      woken AS (
        SELECT pg_notify('${NOTIFY_CHANNEL}', 'r') FROM (SELECT 1 FROM promoted WHERE state = 'ready' AND $4 LIMIT 1) p),
      told AS (
        SELECT pg_notify('${SETTLED_CHANNEL}', string_agg(id::text, ',')) FROM (
          SELECT id, (row_number() OVER ()) / 390 AS part FROM done WHERE $4) s GROUP BY part)
      SELECT 'refused'::text, v.id FROM v WHERE NOT EXISTS (SELECT 1 FROM done WHERE done.id = v.id)
      UNION ALL SELECT 'promoted'::text, COUNT(*) FROM promoted WHERE state = 'ready'
      UNION ALL SELECT 'notified'::text, NULL::bigint FROM woken
      UNION ALL SELECT 'told'::text, COUNT(*) FROM told;
    END
    $body$`;

/**
 * Tracing (nestjs-sql-job-queue/tracing): the job's trace context, its enqueue's and then its
 * completed attempt's, for its attempts and its dependents to link to. NULL without tracing; a
 * nullable column without a default is a catalog-only change.
 *
 * A traced worker writes each attempt's context with its result, in the same statement: a
 * five-argument `job_queue_complete` (an overload; the four-argument form of migration 13 is
 * untouched and still what untraced workers call). Its body is migration 13's with a `carrier`
 * column in `v`: a separate UPDATE per batch wrote every finished row twice and cost a traced
 * run at prefetch 500 about half its throughput.
 */
export class JobQueueTraceContextPostgres1767100000001 extends JobQueueMigration {
  readonly version = 15;
  readonly name = 'JobQueueTraceContext1767100000001';
  protected readonly upSql = [
    `ALTER TABLE jobs ADD COLUMN trace_context text NULL`,
    COMPLETE_TRACED_SQL_V15,
    // A traced worker's read after each claim: the claimed jobs' contexts and their upstreams'.
    // A function so that its plan is made once per session: as an ad-hoc statement per claim of
    // ten jobs (the default concurrency), parsing and planning it was most of its cost.
    `CREATE FUNCTION job_queue_trace_contexts(bigint[])
      RETURNS TABLE (job_id bigint, upstream_id bigint, trace_context text)
      LANGUAGE plpgsql STABLE
      SET plan_cache_mode = force_generic_plan
    AS $body$
    BEGIN
      RETURN QUERY
      SELECT j.id, NULL::bigint, j.trace_context FROM jobs j WHERE j.id = ANY ($1) AND j.trace_context IS NOT NULL
      UNION ALL
      SELECT d.job_id, d.depends_on_id, u.trace_context FROM job_deps d JOIN jobs u ON u.id = d.depends_on_id
        WHERE d.job_id = ANY ($1) AND u.trace_context IS NOT NULL;
    END
    $body$`,
  ];
  protected readonly downSql = [
    `DROP FUNCTION job_queue_trace_contexts(bigint[])`,
    `DROP FUNCTION job_queue_complete(text, bigint[], text[], boolean, text[])`,
    `ALTER TABLE jobs DROP COLUMN trace_context`,
  ];
}
