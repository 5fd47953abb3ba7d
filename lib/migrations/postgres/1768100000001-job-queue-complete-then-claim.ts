import { IDS_PER_NOTIFICATION } from '../../notify/settled-notify.sql';
import { NOTIFY_CHANNEL, SETTLED_CHANNEL } from '../../notify/notify.sql';
import { JobQueueMigration } from '../job-queue-migration';

/**
 * A complete that ends with the worker's own claim (lib/finalize/follow-up-claim.ts) as one
 * function instead of one statement of six CTEs. That statement was parsed and planned on every
 * call (node-postgres sends unnamed statements), about 0.45 ms of PostgreSQL's time per chain
 * link (pgbench: 1.23 ms extended against 0.76 ms prepared); a function's statements are planned
 * once per session. The work and its order are the statement's: the complete (migration 15's
 * five-argument form, carriers may be NULL), then the claim (the rotation's when `rotation` is
 * set) with `synchronous_commit` put back after it, so the commit is as durable as the
 * complete's alone; then the notifications (the settled ids except the refused ones; the ready
 * wake `wake` when the complete promoted any). Rows: one per claimed job, or one with NULL job
 * columns when it took none; every row carries the complete's rows as `done_kinds`/`done_jobs`.
 * `trace_context` is the claimed row's when `with_trace`, else NULL.
 */
export const COMPLETE_THEN_CLAIM_SQL_V27 = `CREATE FUNCTION job_queue_complete_then_claim(
        p_owner text, p_ids bigint[], p_results text[], p_carriers text[], p_notify boolean, p_wake text,
        p_types text[], p_groups text[], p_limits int[], p_any int, p_ttl float8, p_start boolean,
        p_rotation int, p_weight_groups text[], p_weights int[], p_with_trace boolean)
      RETURNS TABLE (done_kinds text[], done_jobs bigint[], id bigint, type varchar, args text, attempts integer,
        max_attempts integer, group_key varchar, priority integer, parent_id bigint, timeout_ms integer,
        run_after float8, trace_context text)
      LANGUAGE plpgsql VOLATILE
      SET plan_cache_mode = force_generic_plan
    AS $$
    #variable_conflict use_column
    DECLARE
      v_kinds text[];
      v_jobs bigint[];
      v_promoted bigint;
      v_sync text := current_setting('synchronous_commit');
      v_claimed bigint;
    BEGIN
      SELECT COALESCE(array_agg(c.kind), '{}'), COALESCE(array_agg(c.job), '{}'),
          COALESCE(max(c.job) FILTER (WHERE c.kind = 'promoted'), 0)
        INTO v_kinds, v_jobs, v_promoted
        FROM job_queue_complete(p_owner, p_ids, p_results, false, p_carriers) c;
      IF p_rotation IS NULL THEN
        RETURN QUERY SELECT v_kinds, v_jobs, j.id, j.type, j.args, j.attempts, j.max_attempts, j.group_key, j.priority,
            j.parent_id, j.timeout_ms, (extract(epoch FROM j.run_after) * 1000)::float8,
            CASE WHEN p_with_trace THEN j.trace_context END
          FROM job_queue_claim(p_owner, p_types, p_groups, p_limits, p_any, p_ttl, p_start) j;
      ELSE
        RETURN QUERY SELECT v_kinds, v_jobs, j.id, j.type, j.args, j.attempts, j.max_attempts, j.group_key, j.priority,
            j.parent_id, j.timeout_ms, (extract(epoch FROM j.run_after) * 1000)::float8,
            CASE WHEN p_with_trace THEN j.trace_context END
          FROM job_queue_claim_rotation(p_owner, p_types, p_rotation, p_ttl, p_start, p_weight_groups, p_weights) j;
      END IF;
      GET DIAGNOSTICS v_claimed = ROW_COUNT;
      PERFORM set_config('synchronous_commit', v_sync, true);
      IF v_claimed = 0 THEN
        RETURN QUERY SELECT v_kinds, v_jobs, NULL::bigint, NULL::varchar, NULL::text, NULL::integer, NULL::integer,
          NULL::varchar, NULL::integer, NULL::bigint, NULL::integer, NULL::float8, NULL::text;
      END IF;
      IF p_notify THEN
        PERFORM pg_notify('${SETTLED_CHANNEL}', string_agg(s.id::text, ',')) FROM (
          SELECT u.id, (row_number() OVER ()) / ${IDS_PER_NOTIFICATION} AS part FROM unnest(p_ids) AS u (id)
          WHERE NOT EXISTS (SELECT 1 FROM unnest(v_kinds, v_jobs) AS r (kind, job) WHERE r.kind = 'refused' AND r.job = u.id)) s
          GROUP BY s.part;
        IF v_promoted > 0 THEN PERFORM pg_notify('${NOTIFY_CHANNEL}', p_wake); END IF;
      END IF;
    END
    $$`;

export class JobQueueCompleteThenClaimPostgres1768100000001 extends JobQueueMigration {
  readonly version = 27;
  readonly name = 'JobQueueCompleteThenClaim1768100000001';
  protected readonly upSql = [COMPLETE_THEN_CLAIM_SQL_V27];
  protected readonly downSql = [
    `DROP FUNCTION job_queue_complete_then_claim(text, bigint[], text[], text[], boolean, text, text[], text[], int[], int, float8, boolean, int, text[], int[], boolean)`,
  ];
}
