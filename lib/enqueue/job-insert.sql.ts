import { binarySlices } from '../database/binary-slices';
import { sql, type Sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';
import type { NormalizedJob } from './normalize-job';
import { sizedChunks } from '../database/sized-chunks';

/** A row about to be written. `id` is preassigned on PostgreSQL and SQLite, and null on MySQL. */
export interface InsertableJob extends Omit<NormalizedJob, 'keyMode' | 'keyWindowMs'> {
  id: number | null;
  ref: string | null;
  state: 'waiting' | 'ready';
  parentId: number | null;
  isContainer: boolean;
  pendingDeps: number;
  pendingChildren: number;
  /** Tracing only (see lib/instrumentation): the enqueue's carrier; the column is written only when some row has one. */
  traceContext?: string | null;
}

const ROWS_PER_STATEMENT = 1_000;
const BYTES_PER_STATEMENT = 4 * 1024 * 1024;

/** Existing jobs with these dedup keys. */
export async function findJobsByKey(tx: SqlExecutor, keys: string[]): Promise<Map<string, { id: number; state: string }>> {
  const found = new Map<string, { id: number; state: string }>();
  for (const chunk of chunks(keys, ROWS_PER_STATEMENT)) {
    const { rows } = await tx.run(sql`SELECT id, job_key, state FROM jobs WHERE job_key IN (${sql.list(chunk)})`);
    for (const r of rows) found.set(String(r.job_key), { id: Number(r.id), state: String(r.state) });
  }
  return found;
}

/**
 * Reads the state of existing upstream jobs under a shared row lock, in id order. The lock
 * orders this insert against the upstream's finalize: either the finalize commits first and we
 * read `done`, or it waits for our commit and then sees (and counts down) our new edges.
 */
export async function lockUpstreamJobs(tx: SqlExecutor, ids: number[]): Promise<Map<number, string>> {
  const states = new Map<number, string>();
  const sorted = [...ids].sort((a, b) => a - b);
  const lock = tx.dialect.name === 'postgres' ? sql` FOR SHARE` : tx.dialect.name === 'mysql' ? sql` LOCK IN SHARE MODE` : sql``;
  for (const chunk of chunks(sorted, ROWS_PER_STATEMENT)) {
    const { rows } = await tx.run(sql`SELECT id, state FROM jobs WHERE id IN (${sql.list(chunk)}) ORDER BY id${lock}`);
    for (const r of rows) states.set(Number(r.id), String(r.state));
  }
  return states;
}

/**
 * Reserves `count` ids before inserting, so parent ids and dependency edges can be written in
 * the same multi-row statements. MySQL cannot (see insertJobs); it returns null.
 */
export async function allocateJobIds(tx: SqlExecutor, count: number): Promise<number[] | null> {
  if (count === 0) return [];
  if (tx.dialect.name === 'postgres') {
    const { rows } = await tx.run(
      sql`SELECT nextval(pg_get_serial_sequence('jobs', 'id')) AS id FROM generate_series(1, ${count}::int)`,
    );
    return rows.map((r) => Number(r.id));
  }
  if (tx.dialect.name === 'sqlite') {
    // AUTOINCREMENT hands out max(sqlite_sequence.seq, max(rowid)) + 1; bumping seq first
    // reserves the block for this transaction, which holds the write lock.
    await tx.run(sql`INSERT INTO sqlite_sequence (name, seq) SELECT 'jobs', COALESCE((SELECT MAX(id) FROM jobs), 0)
      WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'jobs')`);
    const { rows } = await tx.run(
      sql`UPDATE sqlite_sequence SET seq = MAX(seq, COALESCE((SELECT MAX(id) FROM jobs), 0)) + ${count} WHERE name = 'jobs' RETURNING seq`,
    );
    const last = Number(rows[0].seq);
    return Array.from({ length: count }, (_, i) => last - count + 1 + i);
  }
  return null;
}

/**
 * Multi-row inserts, chunked by rows and bytes. Returns the ids in input order.
 * On MySQL a multi-row INSERT ("simple insert") receives consecutive AUTO_INCREMENT values
 * in every innodb_autoinc_lock_mode, stepping by auto_increment_increment.
 */
export async function insertJobs(tx: SqlExecutor, jobs: InsertableJob[], autoIncrementStep = 1): Promise<number[]> {
  if (tx.dialect.name === 'postgres') return insertJobsPostgres(tx, jobs);
  const ids: number[] = [];
  // SQLite evaluates strftime('now') three times per row; one bound timestamp per statement
  // made bulk inserts 13% faster. The rows of one insert share their creation time anyway.
  const now = tx.dialect.name === 'sqlite' ? sql`${tx.dialect.timeParam(new Date())}` : tx.dialect.now();
  // SQLite: statements of a few sizes only (binarySlices); one per chunk elsewhere (a round trip each).
  const statements = tx.dialect.name === 'sqlite' ? byteChunks(jobs).flatMap((c) => binarySlices(c)) : byteChunks(jobs);
  for (const chunk of statements) {
    const withId = chunk[0].id !== null;
    const traced = isTraced(chunk);
    const values = chunk.map(
      (j) => sql`(${withId ? sql`${j.id}, ` : sql``}${j.type}, ${j.ref}, ${j.argsJson}, ${j.state}, ${j.parentId},
        ${j.isContainer ? 1 : 0}, ${j.pendingDeps}, ${j.pendingChildren}, ${j.group}, ${j.weight}, ${j.priority},
        ${j.runAfter ? tx.dialect.timeParam(j.runAfter) : now}, ${j.maxAttempts}, ${j.timeoutMs}, ${j.key}, ${now}, ${now}${traced ? sql`, ${j.traceContext ?? null}` : sql``})`,
    );
    const result = await tx.run(sql`INSERT INTO jobs (${withId ? sql`id, ` : sql``}type, ref, args, state, parent_id,
      is_container, pending_deps, pending_children, group_key, weight, priority,
      run_after, max_attempts, timeout_ms, job_key, created_at, updated_at${traced ? sql`, trace_context` : sql``})
      VALUES ${sql.join(values)}`);
    if (withId) {
      chunk.forEach((j) => ids.push(j.id!));
    } else {
      if (result.insertId === undefined || !(result.insertId > 0)) throw new Error('INSERT returned no insertId');
      chunk.forEach((_, i) => ids.push(result.insertId! + i * autoIncrementStep));
    }
  }
  return ids;
}

/**
 * PostgreSQL: one array parameter per column, unnested server-side. A multi-row VALUES list
 * of 1,000 rows is 18,000 parameters for the server to parse and plan; this is 16, whatever
 * the row count (graphile-worker and pg-boss insert batches the same way).
 */
async function insertJobsPostgres(tx: SqlExecutor, jobs: InsertableJob[]): Promise<number[]> {
  const ids: number[] = [];
  for (const chunk of byteChunks(jobs, UNNEST_ROWS, UNNEST_BYTES)) {
    const col = <T>(pick: (j: InsertableJob) => T) => chunk.map(pick);
    // Without reserved ids (no containers), the identity column assigns them; each row comes back
    // with its ref, unique within the graph (or it is a single job).
    const assigned = chunk[0].id === null;
    const traced = isTraced(chunk);
    const trace = traced ? sql`, trace_context` : sql``;
    const { rows } = await tx.run(sql`INSERT INTO jobs (${assigned ? sql`` : sql`id, `}type, ref, args, state, parent_id, is_container, pending_deps, pending_children,
        group_key, weight, priority, run_after, max_attempts, timeout_ms, job_key, created_at, updated_at${trace})
      SELECT ${assigned ? sql`` : sql`id, `}type, ref, args, state, parent_id, is_container, pending_deps, pending_children,
        group_key, weight, priority, COALESCE(run_after, now()), max_attempts, timeout_ms, job_key, now(), now()${trace}
      FROM unnest(${col((j) => j.id)}::bigint[], ${col((j) => j.type)}::text[], ${col((j) => j.ref)}::text[],
        ${col((j) => j.argsJson)}::text[], ${col((j) => j.state)}::text[], ${col((j) => j.parentId)}::bigint[],
        ${col((j) => (j.isContainer ? 1 : 0))}::smallint[], ${col((j) => j.pendingDeps)}::int[], ${col((j) => j.pendingChildren)}::int[],
        ${col((j) => j.group)}::text[], ${col((j) => j.weight)}::int[], ${col((j) => j.priority)}::int[],
        ${col((j) => (j.runAfter ? j.runAfter.toISOString() : null))}::timestamptz[], ${col((j) => j.maxAttempts)}::int[],
        ${col((j) => j.timeoutMs)}::int[], ${col((j) => j.key)}::text[]${traced ? sql`, ${col((j) => j.traceContext ?? null)}::text[]` : sql``})
      AS r (id, type, ref, args, state, parent_id, is_container, pending_deps, pending_children,
        group_key, weight, priority, run_after, max_attempts, timeout_ms, job_key${trace})
      ${assigned ? sql`RETURNING id, ref` : sql``}`);
    if (!assigned) chunk.forEach((j) => ids.push(j.id!));
    else if (chunk.length === 1) ids.push(Number(rows[0].id));
    else {
      const byRef = new Map(rows.map((r) => [String(r.ref), Number(r.id)]));
      chunk.forEach((j) => ids.push(byRef.get(j.ref!)!));
    }
  }
  return ids;
}

const UNNEST_ROWS = 10_000;
/**
 * Characters of args per unnest statement. The driver writes each array parameter as one string:
 * 600 jobs of 1 MB args (each within the default maxArgsBytes) in one graph passed V8's longest
 * string (about 512 MB) and the enqueue failed with a RangeError, where MySQL and SQLite, chunked
 * by bytes, took them.
 */
const UNNEST_BYTES = 64 * 1024 * 1024;

/** Some row carries a trace context (tracing on); otherwise the statements are what they were without tracing. */
function isTraced(jobs: readonly InsertableJob[]): boolean {
  for (const j of jobs) if (j.traceContext != null) return true;
  return false;
}

/** MySQL only: parent ids are known after the insert. */
export async function setParents(tx: SqlExecutor, pairs: Array<{ id: number; parentId: number }>): Promise<void> {
  for (const chunk of chunks(pairs, ROWS_PER_STATEMENT)) {
    const cases = sql.join(chunk.map((p) => sql`WHEN ${p.id} THEN ${p.parentId}`), ' ');
    await tx.run(sql`UPDATE jobs SET parent_id = CASE id ${cases} END WHERE id IN (${sql.list(chunk.map((p) => p.id))})`);
  }
}

/** An edge: the job, the job it waits for, and 1 when it allows that job to fail (default 0). */
export type Edge = [jobId: number, dependsOnId: number, allowFailure?: 0 | 1];

export async function insertDependencies(tx: SqlExecutor, edges: Edge[]): Promise<void> {
  // The column is named only when an edge allows failure: the common graph keeps its statements.
  const lenient = edges.some((e) => e[2] === 1);
  if (tx.dialect.name === 'postgres') {
    for (const chunk of chunks(edges, UNNEST_ROWS * 5)) {
      if (lenient) {
        await tx.run(sql`INSERT INTO job_deps (job_id, depends_on_id, allow_failure)
          SELECT * FROM unnest(${chunk.map((e) => e[0])}::bigint[], ${chunk.map((e) => e[1])}::bigint[], ${chunk.map((e) => e[2] ?? 0)}::smallint[])`);
      } else {
        await tx.run(sql`INSERT INTO job_deps (job_id, depends_on_id)
          SELECT * FROM unnest(${chunk.map((e) => e[0])}::bigint[], ${chunk.map((e) => e[1])}::bigint[])`);
      }
    }
    return;
  }
  const all = chunks(edges, ROWS_PER_STATEMENT * 5);
  for (const chunk of tx.dialect.name === 'sqlite' ? all.flatMap((c) => binarySlices(c)) : all) {
    if (lenient) {
      const values: Sql[] = chunk.map(([a, b, f]) => sql`(${a}, ${b}, ${f ?? 0})`);
      await tx.run(sql`INSERT INTO job_deps (job_id, depends_on_id, allow_failure) VALUES ${sql.join(values)}`);
    } else {
      const values: Sql[] = chunk.map(([a, b]) => sql`(${a}, ${b})`);
      await tx.run(sql`INSERT INTO job_deps (job_id, depends_on_id) VALUES ${sql.join(values)}`);
    }
  }
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function byteChunks(jobs: InsertableJob[], maxRows = ROWS_PER_STATEMENT, maxBytes = BYTES_PER_STATEMENT): InsertableJob[][] {
  return sizedChunks(jobs, maxRows, maxBytes, (job) => job.argsJson.length);
}

/** MySQL: the step between AUTO_INCREMENT values of one multi-row insert. */
export async function readAutoIncrementStep(db: SqlExecutor): Promise<number> {
  const { rows } = await db.run(sql`SELECT @@auto_increment_increment AS step`);
  return Number(rows[0]?.step ?? 1) || 1;
}

/**
 * PostgreSQL, one job without a key: one call of `job_queue_enqueue_one` (migration 6), which
 * inserts, NOTIFYs when asked and returns the row (one round trip, no explicit transaction, a
 * plan made once per session). This is the latency path of `enqueue()`.
 */
export function insertOneJobPostgres(job: NormalizedJob, notify: boolean, columns: Sql, traceContext?: string | null): Sql {
  // Traced: the ten-argument overload (migration 19), which stores the carrier with the row.
  const trace = traceContext != null ? sql`, ${traceContext}::text` : sql``;
  return sql`SELECT ${columns} FROM job_queue_enqueue_one(${job.type}, ${job.argsJson}, ${job.group}, ${job.weight}::int,
    ${job.priority}::int, ${job.runAfter ? job.runAfter.toISOString() : null}::timestamptz, ${job.maxAttempts}::int,
    ${job.timeoutMs}::int, ${notify}${trace})`;
}
