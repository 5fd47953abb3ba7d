import { JobQueueMigration } from '../job-queue-migration';

/**
 * `job_queue_trace_contexts` reads the carriers of at most 127 upstreams per job (MAX_UPSTREAM_LINKS
 * in lib/instrumentation/upstream-links.ts), the lowest ids, in job_deps' primary key order. It
 * read them all: the sink of a 50,000-job fan-in read 50,000 carriers at its claim and made a link
 * of each, of which the SDK keeps 128; its attempt started 0.6-1.6 s after the last upstream
 * finished instead of 29 ms untraced. Same signature and columns, so processes of the previous
 * version call it unchanged.
 */
export const TRACE_CONTEXTS_SQL_V35 = `CREATE OR REPLACE FUNCTION job_queue_trace_contexts(bigint[])
      RETURNS TABLE (job_id bigint, upstream_id bigint, trace_context text)
      LANGUAGE plpgsql STABLE
      SET plan_cache_mode = force_generic_plan
    AS $body$
    BEGIN
      RETURN QUERY
      SELECT j.id, NULL::bigint, j.trace_context FROM jobs j WHERE j.id = ANY ($1) AND j.trace_context IS NOT NULL
      UNION ALL
      SELECT a.id, u.id, u.trace_context FROM unnest($1) AS a(id)
        CROSS JOIN LATERAL (SELECT d.depends_on_id FROM job_deps d WHERE d.job_id = a.id ORDER BY d.depends_on_id LIMIT 127) d
        JOIN jobs u ON u.id = d.depends_on_id
        WHERE u.trace_context IS NOT NULL;
    END
    $body$`;

export class JobQueueTraceUpstreamLinksPostgres1769000000002 extends JobQueueMigration {
  readonly version = 35;
  readonly name = 'JobQueueTraceUpstreamLinks1769000000002';
  protected readonly upSql = [TRACE_CONTEXTS_SQL_V35];
  protected readonly downSql = [
    `CREATE OR REPLACE FUNCTION job_queue_trace_contexts(bigint[])
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
}
