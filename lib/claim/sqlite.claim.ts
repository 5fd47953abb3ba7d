import type { SqlDialect } from '../database/dialects';
import { chunked, sql, type Sql } from '../database/sql';
import type { Row, SqlExecutor } from '../database/sql-executor';
import { skippedGroups, type ClaimQuota, type ClaimRequest } from './claim-request';
import { claimedColumns, toClaimedJob, type ClaimedJob } from './claimed-job';
import { selectClaimCandidates } from './claim-candidates.sql';
import { leaseAssignments } from './lease-assignments';
import { leaseJobs } from './lease-jobs.sql';
import { takeBatch } from '../finalize/take-batch';
import { dueLevelsStatement, HEADS_ONE_BY_ONE, levelsBelow, readyByTypeStatement, readyTypesStatement, sqliteHeadStatement, toSqliteLevels, TYPES_PER_CHECK, TYPES_PER_PROBE, type SqliteLevels, type SqliteTypeLevels } from './ready-by-type.sql';

/**
 * SQLite has no row locks (FOR UPDATE does nothing): the transaction is `BEGIN IMMEDIATE`,
 * which holds the database's single write lock from the start, so select-and-update is
 * atomic against every other connection and process.
 */
export async function claimSqlite(tx: SqlExecutor, request: ClaimRequest): Promise<ClaimedJob[]> {
  const d = tx.dialect;
  let levels: SqliteLevels | undefined;
  if (request.types.length >= SQLITE_CHECK_TYPES_FROM) {
    // Several handled types: those with ready rows (readyTypesStatement), then the due levels of
    // those (dueLevelsStatement); the claim reads only these.
    const present: string[] = [];
    for (const slice of chunked(request.types, TYPES_PER_CHECK)) {
      for (const row of (await tx.run(readyTypesStatement(d, slice))).rows) present.push(String(row.type));
    }
    const found = new Map<string, SqliteTypeLevels>();
    for (const slice of chunked(present, TYPES_PER_CHECK)) {
      const { levels: due, unsure } = toSqliteLevels((await tx.run(dueLevelsStatement(d, slice))).rows);
      for (const [type, at] of due) found.set(type, at);
      // Nothing due at the priority below the top: look further down, head by head. Under a due
      // top its rows come first, and the rest below it in one pass if any is due there; otherwise
      // the read starts at the first priority with due rows.
      for (const [type, { top, topDue, from }] of unsure) {
        const below = await levelsBelow(tx, type, from);
        if (topDue) found.set(type, { read: below ? ['top', 'below'] : ['top'], top });
        else if (below) found.set(type, below);
      }
    }
    if (!found.size) return [];
    levels = found;
    request = { ...request, types: request.types.filter((t) => found.has(t)) };
  }
  // More types than one compound SELECT probes: select, then lease (still one transaction).
  if (request.types.length > TYPES_PER_PROBE) return leaseJobs(tx, request, await selectClaimCandidates(tx, request));
  const claimed: ClaimedJob[] = [];
  for (const quota of request.quotas) {
    if (quota.limit <= 0) continue;
    // Without the check there is one type (SQLITE_CHECK_TYPES_FROM).
    const rows = levels ? await take(tx, request, quota, levels) : await takeByLevel(tx, request, quota);
    for (const row of rows) claimed.push(toClaimedJob(row));
  }
  return claimed;
}

/**
 * From this many handled types a SQLite claim first checks which have due rows, and at which
 * level (readyTypesStatement, dueLevelsStatement): its compound SELECT then has an arm per due level, mostly one per
 * type with work. Without the check, two types read four arms on every claim (0.50 against 0.34 ms
 * for a claim of 10 spread over two types).
 */
export const SQLITE_CHECK_TYPES_FROM = 2;

/**
 * One type, not checked: its top priority first, then, only when that is short of the quota, the
 * priorities below it (whose rows all come after in claim order) head by head, as the rotation
 * reads a group (sqliteHeadStatement): a priority whose head is not due has nothing due and costs
 * one index entry; one whose head is due is read as a range that ends at the first job due later.
 * Past HEADS_ONE_BY_ONE heads, the rest in one pass. A busy claim reads one range. One compound
 * SELECT of both levels cost every claim ~50 µs more (0.33 against 0.26 ms for a claim of 10).
 */
async function takeByLevel(tx: SqlExecutor, request: ClaimRequest, quota: ClaimQuota): Promise<Row[]> {
  const [type] = request.types;
  const only = (levels: SqliteTypeLevels): SqliteLevels => new Map([[type, levels]]);
  const rows = await take(tx, request, quota, only({ read: ['top'] }));
  // The priority read last: the rows' (all of one priority); without rows the first head is the top's.
  let above = rows.length ? Number(rows[0].priority) : undefined;
  for (let level = 0; rows.length < quota.limit; level++) {
    const rest = { ...quota, limit: quota.limit - rows.length };
    if (level >= HEADS_ONE_BY_ONE && above !== undefined) {
      rows.push(...(await take(tx, request, rest, only({ read: ['below'], top: above }))));
      break;
    }
    const [head] = (await tx.run(sqliteHeadStatement(tx.dialect, sql`priority`, type, quota.group, above))).rows;
    if (!head) break;
    above = Number(head.priority);
    if (Number(head.due)) rows.push(...(await take(tx, request, rest, only({ read: ['top'], top: above }))));
  }
  return rows;
}

async function take(tx: SqlExecutor, request: ClaimRequest, quota: ClaimQuota, levels: SqliteLevels): Promise<Row[]> {
  return pickThenLease(tx, request, quota, levels, quota.limit > UNSIZED_UP_TO ? SQLITE_CLAIM_BYTES : undefined);
}

/**
 * A claim picks its ids, then leases them by id: one statement text whatever their number.
 * (`UPDATE … WHERE id IN (SELECT … LIMIT n)` in one statement cost about 30 µs more for a claim
 * of 1 or 10 (raw better-sqlite3, 20,000 ready rows: 59 against 31 µs, 131 against 106), the
 * same for 50 and 100.) Quotas up to this size pick from the ready index alone; larger ones also
 * read their args' sizes (SQLITE_CLAIM_BYTES). A chain's next link and a worker at its defaults
 * claim a few jobs at a time.
 */
export const UNSIZED_UP_TO = 20;

/**
 * Args a larger claim leases at most (and at least one job): SQLite rewrites every leased row
 * whole, args included, and returns the args, all in the claim's one turn of the event loop and
 * under the database's single write lock. A claim of 500 prefetched jobs with 1 MB args held both
 * for 15 s. The sizes come from the record headers (octet_length), not the values.
 */
export const SQLITE_CLAIM_BYTES = 16 * 1024 * 1024;

/** The quota's ready ids in claim order, cut at `maxBytes` of args when given, then one UPDATE of those ids. */
async function pickThenLease(tx: SqlExecutor, request: ClaimRequest, quota: ClaimQuota, levels?: SqliteLevels, maxBytes?: number): Promise<Row[]> {
  const { rows: found } = await tx.run(sqlitePickStatement(tx.dialect, request, quota, levels, maxBytes !== undefined));
  const picked = maxBytes === undefined ? found : takeBatch(found, found.length, maxBytes, (r) => Number(r.bytes));
  if (!picked.length) return [];
  const { rows } = await tx.run(sqliteLeaseByIds(tx.dialect, request, picked.map((r) => Number(r.id))));
  return rows;
}

/** A quota's ready ids (pickThenLease), with their args' stored sizes when `sized`; exported for EXPLAIN in tests. */
export function sqlitePickStatement(d: SqlDialect, request: ClaimRequest, quota: ClaimQuota, levels?: SqliteLevels, sized = false): Sql {
  const columns = sized ? sql`id, priority, run_after, octet_length(args) AS bytes` : sql`id, priority, run_after`;
  return readyByTypeStatement(d, request.types, quota.limit, { columns, group: quota.group, excludeGroups: skippedGroups(request), lock: false, levels });
}

/** The lease of picked ids, exported for EXPLAIN in tests: the ids travel as one JSON array. */
export function sqliteLeaseByIds(d: SqlDialect, request: ClaimRequest, ids: readonly number[]): Sql {
  return sql`
    UPDATE jobs SET ${leaseAssignments(d, request)}
    WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))
    RETURNING ${claimedColumns(request)}`;
}
