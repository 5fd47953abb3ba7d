import type { JobState, JobView } from '../job.types';
import type { SqlDialect } from './dialects';
import { sql, type Sql } from './sql';
import type { Row } from './sql-executor';
import { storedBytes } from './stored-bytes';

const PLAIN_COLUMNS = [
  'id', 'type', 'ref', 'args', 'result', 'state', 'parent_id', 'is_container', 'group_key', 'weight',
  'priority', 'attempts', 'max_attempts', 'snoozes', 'last_error', 'timeout_ms', 'progress', 'current_stage', 'job_key',
  'lease_owner',
];
const TIME_COLUMNS = ['run_after', 'created_at', 'started_at', 'finished_at', 'updated_at', 'lease_expires'];

const cache = new Map<string, Sql>();

/** The select list of a job row; time columns in a form `parseTime` reads on any session setting. */
export function jobColumns(dialect: SqlDialect, alias = ''): Sql {
  const cacheKey = `${dialect.name}:${alias}`;
  let columns = cache.get(cacheKey);
  if (!columns) {
    const prefix = alias ? `${alias}.` : '';
    columns = sql.join([
      ...PLAIN_COLUMNS.map((c) => sql`${sql.raw(prefix + c)}`),
      ...TIME_COLUMNS.map((c) => sql`${dialect.selectTime(prefix + c)} AS ${sql.raw(c)}`),
    ]);
    cache.set(cacheKey, columns);
  }
  return columns;
}

/** jobColumns with some columns' expressions replaced (each naming its column, and any more it adds). */
export function jobColumnsReplacing(dialect: SqlDialect, replace: Readonly<Record<string, Sql>>): Sql {
  return sql.join([
    ...PLAIN_COLUMNS.map((c) => replace[c] ?? sql`${sql.raw(c)}`),
    ...TIME_COLUMNS.map((c) => sql`${dialect.selectTime(c)} AS ${sql.raw(c)}`),
  ]);
}

/**
 * jobColumns, but args and result only where together they weigh at most `capBytes`, and their
 * size as `stored_bytes` (see storedBytes): a page of rows whose large values are read apart.
 */
export function jobColumnsWithin(dialect: SqlDialect, capBytes: number): Sql {
  const within = sql`${storedBytes(dialect)} <= ${capBytes}`;
  return sql.join([
    ...PLAIN_COLUMNS.map((c) => (c === 'args' || c === 'result' ? sql`CASE WHEN ${within} THEN ${sql.raw(c)} END AS ${sql.raw(c)}` : sql`${sql.raw(c)}`)),
    ...TIME_COLUMNS.map((c) => sql`${dialect.selectTime(c)} AS ${sql.raw(c)}`),
    sql`${storedBytes(dialect)} AS stored_bytes`,
  ]);
}

/** The internal row shape, with ids as numbers and JSON parsed. */
export interface JobRecord extends JobView {
  leaseOwner: string | null;
  leaseExpires: Date | null;
}

export function toJobRecord(row: Row, dialect: SqlDialect): JobRecord {
  const time = (c: string) => dialect.parseTime(row[c]);
  return {
    id: Number(row.id),
    type: String(row.type),
    ref: (row.ref as string | null) ?? null,
    state: row.state as JobState,
    args: parseStoredJson(row.args),
    result: row.result == null ? null : parseStoredJson(row.result),
    attempts: Number(row.attempts),
    maxAttempts: Number(row.max_attempts),
    snoozes: Number(row.snoozes ?? 0),
    lastError: (row.last_error as string | null) ?? null,
    progress: Number(row.progress),
    currentStage: (row.current_stage as string | null) ?? null,
    group: String(row.group_key),
    weight: Number(row.weight),
    priority: Number(row.priority),
    parentId: row.parent_id == null ? null : Number(row.parent_id),
    isContainer: Number(row.is_container) === 1,
    key: (row.job_key as string | null) ?? null,
    timeoutMs: row.timeout_ms == null ? null : Number(row.timeout_ms),
    runAfter: time('run_after')!,
    createdAt: time('created_at')!,
    startedAt: time('started_at'),
    finishedAt: time('finished_at'),
    updatedAt: time('updated_at')!,
    leaseOwner: (row.lease_owner as string | null) ?? null,
    leaseExpires: time('lease_expires'),
  };
}

/** The public view: the record without lease bookkeeping. */
export function toJobView<TArgs = unknown, TResult = unknown>(record: JobRecord): JobView<TArgs, TResult> {
  const { leaseOwner: _owner, leaseExpires: _expires, ...view } = record;
  return view as JobView<TArgs, TResult>;
}

/**
 * A view's args or result: parsed, or, for text that is not JSON, the text as stored. Only a row
 * written around the queue holds such text (MariaDB and SQLite accept it; PostgreSQL's args index
 * refuses it); one of them made every get, waitFor and find page that read it throw a SyntaxError.
 * Its claim fails that job's own attempt instead (see claimed-job.ts).
 */
export function parseStoredJson(value: unknown): unknown {
  try {
    return parseJson(value);
  } catch {
    return value;
  }
}

export function parseJson(value: unknown): unknown {
  if (value == null) return null;
  if (typeof value !== 'string') return value; // a driver that already parsed it
  return JSON.parse(value);
}
