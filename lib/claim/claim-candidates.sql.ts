import type { SqlDialect } from '../database/dialects';
import { chunked, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import { skippedGroups, type ClaimQuota, type ClaimRequest } from './claim-request';
import { claimedColumns, inClaimOrder, toClaimedJob, type ClaimedJob } from './claimed-job';
import {
  addFloor,
  floorHeadsBelowStatement,
  HEADS_ONE_BY_ONE,
  readFloorRows,
  readyByTypeStatement,
  readyFloorsStatement,
  typeSlices,
  TYPES_PER_CHECK,
  TYPES_PER_PROBE,
  type ReadyFloor,
} from './ready-by-type.sql';

/**
 * The ready rows a claim would take, locked: exclusive `FOR UPDATE SKIP LOCKED` on PostgreSQL
 * and MySQL (never the shared form: two claimers holding shared locks on the same row would
 * both try to upgrade and deadlock); plain on SQLite, whose BEGIN IMMEDIATE already excludes
 * every other writer. Each type is read from its own stretch of a ready index, in order, up to
 * the quota (readyByTypeStatement): never a sort of every match, never another type's row. On
 * MySQL from each type's floor (readyFloorsStatement), where one is given.
 */
export function claimCandidatesStatement(
  d: SqlDialect,
  types: readonly string[],
  quota: ClaimQuota,
  excludeGroups?: readonly string[],
  withTrace = false,
  floors?: ReadonlyMap<string, ReadyFloor>,
): Sql {
  return readyByTypeStatement(d, types, quota.limit, { columns: claimedColumns({ withTrace }), group: quota.group, excludeGroups, lock: true, floors });
}

/**
 * `readFloors: false` where the transaction has written ready rows already (a finalize that
 * promoted or retried jobs, then claims): a consistent read looks up in the clustered index every
 * entry on an index page the transaction itself changed, so there the floors' read cost a chain
 * link more than it saved (MariaDB 1.7 → 2.7 ms of server CPU per link).
 */
export async function selectClaimCandidates(tx: SqlExecutor, request: ClaimRequest, readFloors = true): Promise<ClaimedJob[]> {
  const found = new Map<number, ClaimedJob>();
  for (const quota of request.quotas) {
    if (quota.limit <= 0) continue;
    // MySQL: where each type's ready rows begin, read without locks, so the locking read does
    // not walk the entries of rows claimed before (see readyFloorsStatement), and reads only the
    // types that have some. Where the transaction wrote ready rows, only past one locking
    // statement's types: below, a chain link keeps its one locking read (readFloors).
    const withFloors = tx.dialect.name === 'mysql' && (readFloors || request.types.length > TYPES_PER_PROBE);
    const floors = withFloors ? await readyFloors(tx, request.types, { group: quota.group, excludeGroups: skippedGroups(request) }) : undefined;
    const types = floors ? request.types.filter((t) => floors.has(t)) : request.types;
    // More types than one statement probes: the best of every slice's best, cut to the quota
    // (the rows read beyond it stay locked until the claim commits).
    const slices = types.length ? typeSlices(tx.dialect, types) : [];
    const rows: ClaimedJob[] = [];
    for (const slice of slices) {
      const result = await tx.run(claimCandidatesStatement(tx.dialect, slice, quota, skippedGroups(request), request.withTrace, floors));
      for (const row of result.rows) rows.push(toClaimedJob(row));
    }
    if (slices.length > 1) rows.sort(inClaimOrder).splice(quota.limit);
    for (const record of rows) found.set(record.id, record);
  }
  return [...found.values()];
}

/**
 * MySQL: the floors of every type that has due rows, TYPES_PER_CHECK types per statement; below a
 * head above priority 0 that is not due, head by head (floorHeadsBelowStatement, one round trip
 * per priority looked at, for all such types at once), past HEADS_ONE_BY_ONE in one pass.
 */
async function readyFloors(tx: SqlExecutor, types: readonly string[], probe: { group?: string; excludeGroups?: readonly string[] }): Promise<Map<string, ReadyFloor>> {
  const floors = new Map<string, ReadyFloor>();
  const take = (found: ReturnType<typeof readFloorRows>) => {
    for (const [type, floor] of found.floors) addFloor(floors, type, floor);
    return found.delayed;
  };
  for (const slice of chunked(types, TYPES_PER_CHECK)) {
    let delayed = take(readFloorRows((await tx.run(readyFloorsStatement(tx.dialect, slice, probe))).rows));
    for (let level = 1; delayed.size; level++) {
      const onePass = level > HEADS_ONE_BY_ONE;
      const below = new Map<string, number>();
      for (const part of chunked([...delayed], TYPES_PER_PROBE)) {
        const rows = (await tx.run(floorHeadsBelowStatement(tx.dialect, new Map(part), probe, onePass))).rows;
        for (const [type, np] of take(readFloorRows(rows))) below.set(type, np);
      }
      delayed = onePass ? new Map() : below;
    }
  }
  return floors;
}
