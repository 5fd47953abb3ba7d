import { NOTIFY_CHANNEL, SETTLED_CHANNEL } from '../../notify/notify.sql';
import { JobQueueMigration } from '../job-queue-migration';

/**
 * Settled notifications without a trigger. Migration 8's statement trigger over the transition
 * table of every UPDATE of jobs (claims, heartbeats, finalizes) cost the claim path about 8%
 * of its throughput, waiters or not. Now the batched complete announces its done jobs inside
 * its own statement (when called with notifications on), and every other settling path is
 * announced by the process that committed it (lib/notify/settled.notifier.ts).
 *
 * The function is migration 5's, plus the `told` CTE: 390 ids per payload stay under the
 * 8,000-byte limit.
 */
const COMPLETE = (told: boolean) => `CREATE OR REPLACE FUNCTION job_queue_complete(text, bigint[], text[], boolean)
      RETURNS TABLE (kind text, job bigint)
      LANGUAGE plpgsql VOLATILE
      SET plan_cache_mode = force_generic_plan
      SET enable_seqscan = off
    AS $body$
    #variable_conflict use_column
    BEGIN
      RETURN QUERY
      WITH v AS (SELECT * FROM unnest($2, $3) AS u (id, result)),
      done AS (
        UPDATE jobs SET result = v.result, state = 'done', progress = 100, finished_at = now(),
          lease_owner = NULL, lease_expires = NULL, updated_at = now()
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
        SELECT pg_notify('${NOTIFY_CHANNEL}', 'r') FROM (SELECT 1 FROM promoted WHERE state = 'ready' AND $4 LIMIT 1) p)${
          told
            ? `,
      told AS (
        SELECT pg_notify('${SETTLED_CHANNEL}', string_agg(id::text, ',')) FROM (
          SELECT id, (row_number() OVER ()) / 390 AS part FROM done WHERE $4) s GROUP BY part)`
            : ''
        }
      SELECT 'refused'::text, v.id FROM v WHERE NOT EXISTS (SELECT 1 FROM done WHERE done.id = v.id)
      UNION ALL SELECT 'promoted'::text, COUNT(*) FROM promoted WHERE state = 'ready'
      UNION ALL SELECT 'notified'::text, NULL::bigint FROM woken${told ? `
      UNION ALL SELECT 'told'::text, COUNT(*) FROM told` : ''};
    END
    $body$`;

const NOTIFY_SETTLED_TRIGGER = [
  `CREATE FUNCTION job_queue_notify_settled() RETURNS trigger LANGUAGE plpgsql AS $body$
    BEGIN
      PERFORM pg_notify('${SETTLED_CHANNEL}', string_agg(id::text, ','))
      FROM (SELECT id, (row_number() OVER ()) / 390 AS part
            FROM settled_rows WHERE state IN ('done', 'failed', 'cancelled')) s
      GROUP BY part;
      RETURN NULL;
    END
    $body$`,
  `CREATE TRIGGER job_queue_settled_notify AFTER UPDATE ON jobs
      REFERENCING NEW TABLE AS settled_rows
      FOR EACH STATEMENT EXECUTE FUNCTION job_queue_notify_settled()`,
];

/** The four-argument complete as this migration leaves it (migration 22 derives from it). */
export const COMPLETE_SQL_V13 = COMPLETE(true);

export class JobQueueSettledInCompletePostgres1766000000002 extends JobQueueMigration {
  readonly version = 13;
  readonly name = 'JobQueueSettledInComplete1766000000002';
  protected readonly upSql = [
    `DROP TRIGGER IF EXISTS job_queue_settled_notify ON jobs`,
    `DROP FUNCTION IF EXISTS job_queue_notify_settled()`,
    COMPLETE_SQL_V13,
  ];
  protected readonly downSql = [COMPLETE(false), ...NOTIFY_SETTLED_TRIGGER];
}
