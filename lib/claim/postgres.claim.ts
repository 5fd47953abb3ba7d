import { jobColumns, toJobRecord, type JobRecord } from '../database/job-row';
import type { SqlDialect } from '../database/dialects';
import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { ClaimRequest } from './claim-request';
import { claimableFilter, leaseAssignments } from './lease-assignments';

/**
 * PostgreSQL: one statement. The inner SELECT walks the partial ready index in
 * `priority DESC, id` order and takes row locks with SKIP LOCKED, so concurrent claimers
 * split the rows between them instead of queueing on each other; the UPDATE leases exactly
 * the rows locked. Per-group quotas become one LATERAL probe per group.
 */
export async function claimPostgres(tx: SqlExecutor, request: ClaimRequest): Promise<JobRecord[]> {
  const statement = postgresClaimStatement(tx.dialect, request);
  if (!statement) return [];
  const { rows } = await tx.run(statement);
  return rows.map((r) => toJobRecord(r, tx.dialect));
}

/** The claim statement, exported for EXPLAIN in tests. Null when no quota asks for rows. */
export function postgresClaimStatement(d: SqlDialect, request: ClaimRequest): Sql | null {
  const grouped = request.quotas.filter((q) => q.group !== undefined);
  const anyGroup = request.quotas.filter((q) => q.group === undefined).reduce((n, q) => n + q.limit, 0);
  const picks = [];
  if (grouped.length) {
    picks.push(sql`SELECT j.id FROM unnest(${grouped.map((q) => q.group)}::text[], ${grouped.map((q) => q.limit)}::int[]) AS q(group_key, lim)
      CROSS JOIN LATERAL (
        SELECT id FROM jobs WHERE ${claimableFilter(d, request.types, undefined)} AND group_key = q.group_key
        ORDER BY priority DESC, id LIMIT q.lim FOR UPDATE SKIP LOCKED
      ) j`);
  }
  if (anyGroup > 0) {
    picks.push(sql`(SELECT id FROM jobs WHERE ${claimableFilter(d, request.types, undefined)}
      ORDER BY priority DESC, id LIMIT ${anyGroup} FOR UPDATE SKIP LOCKED)`);
  }
  if (!picks.length) return null;
  // Two picks (grouped and any-group) may lock the same row; UNION dedupes it.
  return sql`
    WITH picked AS (${sql.join(picks, ' UNION ')})
    UPDATE jobs SET ${leaseAssignments(d, request)}
    FROM picked WHERE jobs.id = picked.id
    RETURNING ${jobColumns(d, 'jobs')}`;
}
