import type { SqlDialect } from '../database/dialects';
import { sql, type Sql } from '../database/sql';
import type { Row, SqlExecutor } from '../database/sql-executor';
import { CLAIMED_COLUMNS, inClaimOrder, toClaimedJob, type ClaimedJob } from './claimed-job';
import type { ClaimRequest } from './claim-request';
import { leaseAssignments } from './lease-assignments';
import { pgDueRows, readyByTypeStatement, readyOrder, sqliteDueHead, typeSlices } from './ready-by-type.sql';
import type { RotationCursor, RotationGroup } from './rotation-plan';

/**
 * Reads the rotation cursor `name` (see rotationCursorName), locked until the claim commits, so
 * that concurrent claimers take successive groups instead of the same ones. SQLite's BEGIN
 * IMMEDIATE already excludes every other writer. The first claim of a set of types adds its
 * row (a concurrent first claim adds it once: the insert ignores the row already there).
 * PostgreSQL (claims under caps) and SQLite: MySQL locks the cursor in its walk procedure.
 */
export async function lockRotationCursor(tx: SqlExecutor, name: string): Promise<RotationCursor> {
  const lock = tx.dialect.name === 'sqlite' ? sql`` : sql` FOR UPDATE`;
  const read = () => tx.run(sql`SELECT group_key, served FROM job_queue_rotation WHERE name = ${name}${lock}`);
  let { rows } = await read();
  if (!rows.length) {
    await tx.run(sql`INSERT INTO job_queue_rotation (name) VALUES (${name}) ON CONFLICT (name) DO NOTHING`);
    ({ rows } = await read());
  }
  return rows.length ? { group: String(rows[0].group_key), served: Number(rows[0].served) } : { group: '', served: 0 };
}

export async function saveRotationCursor(tx: SqlExecutor, name: string, cursor: RotationCursor): Promise<void> {
  await tx.run(sql`UPDATE job_queue_rotation SET group_key = ${cursor.group}, served = ${cursor.served} WHERE name = ${name}`);
}

/**
 * MySQL: leases candidates this transaction has locked and moves the cursor it has locked, in one
 * multi-table UPDATE: a rotation claim there is a round trip per statement, and this saves one
 * of six. The lease columns are the jobs table's alone, so the assignments need no qualifier.
 * A LEFT JOIN: without the cursor's row (a table emptied by hand) an inner join updated no job,
 * and the claim handed out jobs it had not leased, for any other worker to claim again.
 */
export async function leaseJobsMovingCursor(tx: SqlExecutor, request: ClaimRequest, candidates: ClaimedJob[], name: string, cursor: RotationCursor): Promise<ClaimedJob[]> {
  const ids = candidates.map((c) => c.id).sort((a, b) => a - b);
  await tx.run(sql`UPDATE jobs LEFT JOIN job_queue_rotation ON job_queue_rotation.name = ${name}
    SET ${leaseAssignments(tx.dialect, request)},
    job_queue_rotation.group_key = ${cursor.group}, job_queue_rotation.served = ${cursor.served}
    WHERE jobs.id IN (${sql.list(ids)})`);
  // The rows are locked, so the values read still hold (as in leaseJobs).
  // In place: a copy by spread would read (and parse) deferred args (see toClaimedJob).
  for (const job of candidates) job.attempts++;
  return candidates;
}

/** The walk of a rotation claim: the cursor, locked, and the groups after it, each with its next job locked. */
export interface RotationWalk {
  cursor: RotationCursor;
  groups: ProbedGroup[];
}

/**
 * Locks the cursor and walks up to `want` groups from it, wrapping round to the first groups
 * (below the first one taken) when the walk runs out; paused groups are stepped over. On MySQL
 * all of it is one call of `job_queue_cursor_walk` (MySQL migrations 13 and 31), where it was
 * two or three round trips; elsewhere the same steps as statements (PostgreSQL comes here for
 * claims under caps only: the others go through its claim function). `readFloors` (MySQL): the walk that steps over the groups
 * with plain reads and then locks the heads it took, by id (migration 16), for the reason of
 * selectClaimCandidates's floors; not in a transaction that has written ready rows.
 */
export async function walkRotation(
  tx: SqlExecutor,
  /** The cursor's name (rotationCursorOf). */
  cursorName: string,
  types: readonly string[],
  want: number,
  paused: readonly string[],
  readFloors = false,
  /** MySQL: the groups at their cap alone; the procedures read the paused ones from their table (MySQL migration 17). */
  full: readonly string[] = [],
): Promise<RotationWalk> {
  if (tx.dialect.name === 'mysql') {
    const procedure = sql.raw(readFloors ? 'job_queue_cursor_walk_floors' : 'job_queue_cursor_walk');
    const { rows } = await tx.run(
      sql`CALL ${procedure}(${cursorName}, ${JSON.stringify(types)}, ${want}, ${full.length ? JSON.stringify(full) : null})`,
    );
    // mysql2 hands back a CALL's result sets (the cursor, then the jobs) followed by its status.
    const sets = rows as unknown as Row[][];
    const [cur] = sets[0];
    return {
      cursor: { group: String(cur.group_key ?? ''), served: Number(cur.served ?? 0) },
      groups: sets[1].map((r) => ({ group: String(r.group_key), weight: Math.max(1, Number(r.weight ?? 1)), next: toClaimedJob(r) })),
    };
  }
  const cursor = await lockRotationCursor(tx, cursorName);
  const ahead = await nextReadyGroups(tx, types, cursor.group, want, undefined, true, paused);
  const wrapped = ahead.length < want ? await nextReadyGroups(tx, types, '', want - ahead.length, ahead[0]?.group, true, paused) : [];
  return { cursor, groups: [...ahead, ...wrapped] };
}

/** A group found by the probe; with `lock`, also its next job, locked. */
export interface ProbedGroup extends RotationGroup {
  next?: ClaimedJob;
}

/**
 * The set of a list of skipped groups, built once per list: a claim's list is the worker's copy
 * of the paused groups (the same array until they change), and 40,000 of them made into a set on
 * every walk were most of a busy worker's CPU.
 */
const setsOfLists = new WeakMap<readonly string[], ReadonlySet<string>>();
function asSet(groups: readonly string[] | ReadonlySet<string>): ReadonlySet<string> {
  if (!Array.isArray(groups)) return groups as ReadonlySet<string>;
  let set = setsOfLists.get(groups);
  if (!set) setsOfLists.set(groups, (set = new Set(groups)));
  return set;
}

/**
 * Up to `max` groups with claimable jobs of these types, in group order from `from` (inclusive)
 * and below `before` if given, each with the weight of its next job: a loose index scan over the
 * (group, type) pairs of the ready rows (`jobs_ready_group_idx`), one statement per pair,
 * plus one for a pair of these types to find its next job due now. So the cost follows the groups
 * and the types in them, however many jobs lie in them: another worker's backlog of a million
 * ready jobs in a group is one pair (reading it row by row took 1.3 s per walk on MariaDB). Past
 * a few pairs of other workers' types in a row, one statement jumps to the next pair of these
 * types (handledPairAfter), so the groups and types of other workers cost a few probes in all.
 *
 * With `lock` (inside a claim: SQLite, and PostgreSQL's claims under caps, there in two statements
 * whatever the groups; MySQL walks in one procedure call, see walkRotation) each group found also
 * returns its next job of any of these types, locked: a group given one slot needs no second statement. The heads of its other types
 * read for the comparison stay locked until the claim commits.
 *
 * Not MIN(group_key), nor a recursive CTE: on a table not analyzed yet PostgreSQL aggregates
 * every ready row for MIN, and MariaDB walks the index from its start for a probe inside a
 * recursive CTE (measured: 35 ms per probe at 30,000 groups, against 0.05 ms for this one).
 */
export async function nextReadyGroups(
  tx: SqlExecutor,
  types: readonly string[],
  from: string,
  max: number,
  before?: string,
  lock = false,
  /** Paused groups: stepped over, never returned. */
  exclude: readonly string[] | ReadonlySet<string> = [],
): Promise<ProbedGroup[]> {
  const d = tx.dialect;
  const skip = asSet(exclude);
  if (d.name === 'postgres' && lock) {
    // A claim under caps: the walk in one call, then the heads of the groups it found, locked,
    // in one statement, where probing group by group cost two round trips per group (a claim
    // under a global cap at 2,000 groups ran at 0.16× of the plain claim; bench fair-share-scale).
    // Groups this process skips (paused, at their cap, out of rate) are asked for on top: at
    // first as many as the slots, then four times more per call while calls come back short of
    // unskipped ones, up to SKIPPED_ASKED. Asking for all 500 from the start made every claim
    // walk 510 groups while 2,000 full rate windows were held, wherever the cursor stood (3,000
    // jobs of unlimited tenants: 0.9 s alone, 2.9-3.7 s beside them).
    const most = max + Math.min(skip.size, SKIPPED_ASKED);
    let ask = Math.min(most, max + Math.min(skip.size, max));
    const groups: string[] = [];
    for (let at = from; ; ask = Math.min(most, ask * 4)) {
      const { rows } = await tx.run(
        sql`SELECT group_key FROM job_queue_ready_groups(${[...types]}::text[], ${at}::text, ${before ?? null}::text, ${ask}::int)`,
      );
      for (const r of rows) {
        const g = String(r.group_key);
        if (groups.length < max && !skip.has(g) && !groups.includes(g)) groups.push(g);
      }
      if (groups.length >= max || rows.length < ask) break;
      at = String(rows[rows.length - 1].group_key); // inclusive: it comes back first, already seen
    }
    if (!groups.length) return [];
    // A head another claimer holds is skipped, and its group with it: it was just served.
    const heads = await tx.run(groupHeadsStatement(d, types, groups));
    return heads.rows.map((r) => ({ group: String(r.group_key), weight: Math.max(1, Number(r.weight ?? 1)), next: toClaimedJob(r) }));
  }
  if (d.name === 'postgres') {
    // One round trip: the same walk in one function call (migration 21), which steps over the
    // groups paused in the table (migration 28); `skip` is this process's copy of them.
    const { rows } = await tx.run(
      sql`SELECT group_key, weight FROM job_queue_ready_groups(${[...types]}::text[], ${from}::text, ${before ?? null}::text, ${max}::int)`,
    );
    const found = rows.map((r) => ({ group: String(r.group_key), weight: Math.max(1, Number(r.weight ?? 1)) }));
    return skip.size ? found.filter((g) => !skip.has(g.group)) : found;
  }
  const handled = asSet(types);
  const found: ProbedGroup[] = [];
  let at = (await tx.run(pairAfter(d, { from }, before))).rows[0];
  /** Pairs of other workers' types stepped over in a row, in this group and the ones before. */
  let missed = 0;
  while (at && found.length < max) {
    const group = String(at.group_key);
    const type = String(at.type);
    // Done with the group once it is taken, paused, or (locking) its heads were all read.
    let done = skip.has(group);
    if (!done && !handled.has(type)) {
      // Another worker's types: past a few of them, jump to the next pair of a handled type,
      // in this group or a later one.
      if (++missed >= PAIRS_BEFORE_JUMP && types.length <= JUMP_TYPES) {
        missed = 0;
        at = (await tx.run(handledPairAfter(d, { group, type }, types, before))).rows[0];
        continue;
      }
    }
    if (!done && handled.has(type)) {
      missed = 0;
      if (lock) {
        const head = await groupHead(tx, types, group, type);
        if (head) found.push({ group, weight: head.weight, next: head.job });
        done = true;
      } else {
        const due = d.name === 'sqlite' ? await sqliteDueHead(tx, PAIR_JOB_COLUMNS, type, group) : (await tx.run(duePairJob(d, group, type))).rows[0];
        if (due) found.push({ group, weight: Math.max(1, Number(due.weight ?? 1)) });
        done = due !== undefined;
      }
    }
    at = (await tx.run(pairAfter(d, done ? { group } : { group, type }, before))).rows[0];
  }
  return found;
}

/** Groups a PostgreSQL walk under caps asks for beyond its slots, to step over those this process skips. */
const SKIPPED_ASKED = 500;

/**
 * PostgreSQL: each group's next job of any of these types, locked, in group order: per group,
 * every type's head from the ready index (as groupHead; the heads not taken stay locked until the
 * claim commits), the best of them. A group without an unlocked head due now returns no row.
 */
function groupHeadsStatement(d: SqlDialect, types: readonly string[], groups: readonly string[]): Sql {
  return sql`SELECT h.* FROM unnest(${[...groups]}::text[]) WITH ORDINALITY AS g (group_key, ord)
    CROSS JOIN LATERAL (
      SELECT p.* FROM unnest(${[...types]}::text[]) AS q (type)
      CROSS JOIN LATERAL (${pgDueRows(sql`${CLAIMED_COLUMNS}, weight`, sql`q.type`, sql` AND group_key = g.group_key`, 1, sql` FOR UPDATE SKIP LOCKED`)}) p
      ORDER BY ${readyOrder(d, 'p.')} LIMIT 1) h
    ORDER BY g.ord`;
}

/**
 * A group's next job of any of these types, locked (the other types' heads read stay locked too),
 * with its weight. `first`: the group's first handled type with ready rows, where the walk found it.
 */
async function groupHead(tx: SqlExecutor, types: readonly string[], group: string, first: string): Promise<{ job: ClaimedJob; weight: number } | undefined> {
  let best: { job: ClaimedJob; weight: number } | undefined;
  const consider = (row: Row | undefined) => {
    if (!row) return;
    const head = { job: toClaimedJob(row), weight: Math.max(1, Number(row.weight ?? 1)) };
    if (!best || inClaimOrder(head.job, best.job) < 0) best = head;
  };
  // SQLite: each type head by head (sqliteDueHead), so a group's jobs due later cost a look
  // nothing; past a few handled types, only those the group has ready rows of (one pair probe
  // each). One compound statement of every type's due rows stepped over the group's jobs due
  // later (12 ms per idle rotation claim of 6 types beside 100,000 due tomorrow).
  if (tx.dialect.name === 'sqlite') {
    const present = types.length <= HEAD_BY_HEAD_TYPES ? types : await handledTypesFrom(tx, group, first, types);
    for (const type of present) consider(await sqliteDueHead(tx, HEAD_COLUMNS, type, group));
    return best;
  }
  for (const slice of typeSlices(tx.dialect, types)) {
    consider((await tx.run(readyByTypeStatement(tx.dialect, slice, 1, { columns: HEAD_COLUMNS, group, lock: true }))).rows[0]);
  }
  return best;
}

/**
 * SQLite: the handled types of a group's ready rows from `first` (one of them) on, in one
 * statement: an index entry per handled type (stepping the group's pairs read one per type of
 * other workers' rows in it).
 */
async function handledTypesFrom(tx: SqlExecutor, group: string, first: string, types: readonly string[]): Promise<string[]> {
  const { rows } = await tx.run(sql`SELECT h.value AS type FROM json_each(${JSON.stringify(types)}) h
    WHERE h.value > ${first} AND EXISTS (SELECT 1 FROM jobs INDEXED BY jobs_ready_group_idx WHERE state = 'ready' AND group_key = ${group} AND type = h.value)
    ORDER BY h.value`);
  return [first, ...rows.map((r) => String(r.type))];
}

const PAIR_INDEX: Record<string, string> = {
  mysql: ' FORCE INDEX (jobs_ready_group_idx)',
  sqlite: ' INDEXED BY jobs_ready_group_idx',
  postgres: '',
};

/** The first (group, type) pair of ready rows from a group on, after a whole group, or after a pair (exported for EXPLAIN in tests). */
export function pairAfter(d: SqlDialect, at: { from: string } | { group: string; type?: string }, before: string | undefined): Sql {
  const probe = (past: Sql) => pairProbe(d, past, before);
  if ('from' in at) return probe(sql`group_key >= ${at.from}`);
  if (at.type === undefined) return probe(sql`group_key > ${at.group}`);
  // PostgreSQL seeks a row value on both columns; MariaDB ranges the OR. SQLite seeks a row value
  // on the group alone and then reads every entry of the group before the type (a million-row
  // backlog of another type: 80 ms), so there it is the rest of the group, then the next group.
  if (d.name === 'postgres') return probe(sql`(group_key, type) > (${at.group}, ${at.type})`);
  if (d.name === 'mysql') return probe(sql`(group_key > ${at.group} OR (group_key = ${at.group} AND type > ${at.type}))`);
  return sql`SELECT * FROM (${probe(sql`group_key = ${at.group} AND type > ${at.type}`)})
    UNION ALL SELECT * FROM (${probe(sql`group_key > ${at.group}`)})
    ORDER BY group_key, type LIMIT 1`;
}

/**
 * SQLite and MySQL: the first pair after (group, type) of one of `handled`, in this group or a
 * later one, in one statement. In the group: an `IN` list of the handled types on the (group,
 * type) index, read in index order so `LIMIT 1` stops at the first present. In later groups: per
 * handled type, its next group from `jobs_ready_type_group_idx`. One index entry per handled type
 * each way, however many pairs of other types lie between: stepping pair by pair cost a statement
 * per pair, and 3,000 other types in a group, or one in each of 20,000 groups (another
 * service's tenants), made every walk that many statements (MariaDB: a planner look of 2 s, which
 * runs every 250 ms).
 */
export function handledPairAfter(d: SqlDialect, at: { group: string; type: string }, handled: readonly string[], before: string | undefined): Sql {
  const here = pairProbe(d, sql`group_key = ${at.group} AND type > ${at.type} AND type IN (${sql.list(handled)})`, before);
  const upper = before === undefined ? sql`` : sql` AND group_key < ${before}`;
  // MariaDB reads a correlated type as `ref` on (state, type) and filters the groups, through a
  // type's backlog in this group: an arm per type, each a range seek.
  const later =
    d.name === 'mysql'
      ? sql.join(
          handled.map(
            (type) => sql`SELECT * FROM (SELECT group_key, ready_type AS type FROM jobs FORCE INDEX (jobs_ready_type_group_idx)
      WHERE ready_type = ${type} AND group_key > ${at.group}${upper} ORDER BY ready_type, group_key LIMIT 1) t`,
          ),
          ' UNION ALL ',
        )
      : sql`SELECT group_key, type FROM (SELECT h.value AS type, (SELECT group_key FROM jobs INDEXED BY jobs_ready_type_group_idx
      WHERE state = 'ready' AND type = h.value AND group_key > ${at.group}${upper} ORDER BY group_key LIMIT 1) AS group_key
      FROM json_each(${JSON.stringify(handled)}) h) WHERE group_key IS NOT NULL`;
  return sql`SELECT * FROM (${here}) h UNION ALL ${later} ORDER BY group_key, type LIMIT 1`;
}

/** The first (group, type) pair of ready rows where `past` holds, below `before` if given. */
function pairProbe(d: SqlDialect, past: Sql, before: string | undefined): Sql {
  const upper = before === undefined ? sql`` : sql` AND group_key < ${before}`;
  return sql`SELECT group_key, type FROM jobs${sql.raw(PAIR_INDEX[d.name])}
    WHERE state = 'ready' AND ${past}${upper} ORDER BY group_key, type LIMIT 1`;
}

/** Another worker's pairs a walk steps over one by one, in a row, before it jumps (handledPairAfter): a jump reads an index entry per handled type. */
const PAIRS_BEFORE_JUMP = 4;
/** Handled types a jump binds at most; a worker with more steps pair by pair. */
const JUMP_TYPES = 500;

const HEAD_COLUMNS = sql`${CLAIMED_COLUMNS}, weight`;
/** SQLite: up to this many handled types, a group's head is read for each of them without looking which it has (groupHead). */
const HEAD_BY_HEAD_TYPES = 4;
const PAIR_JOB_COLUMNS = sql`weight, priority, run_after, id`;

/** The pair's next job due now (delayed jobs are ready rows too), for its weight (MySQL; SQLite reads it by sqliteDueHead, PostgreSQL walks in a function). */
function duePairJob(d: SqlDialect, group: string, type: string): Sql {
  return readyByTypeStatement(d, [type], 1, { columns: PAIR_JOB_COLUMNS, group, lock: false });
}
