import { Injectable } from '@nestjs/common';
import { JobQueueDatabase } from '../database/job-queue.database';
import { JobNotFoundError } from '../errors';
import { InvalidQueryError } from '../errors/query.errors';
import { decodeCursor, encodeCursor } from '../query/find-cursor';
import { JOB_LOG_LEVELS, type JobLogLevel, type JobLogPage, type JobLogQuery } from './job-log.types';
import { jobExists, readLogLines } from './job-logs.sql';

const DEFAULT_LOG_PAGE = 100;
export const MAX_LOG_PAGE = 1_000;

/** Reads a job's log: the lines handlers wrote with `ctx.log()` and the errors of its failed attempts. */
@Injectable()
export class JobLogService {
  constructor(private readonly db: JobQueueDatabase) {}

  /**
   * A page of a job's log, in the order written (a retry's attempts, which start over at 1,
   * after the earlier ones). Throws `InvalidQueryError` for a bad id, attempt or limit,
   * `InvalidCursorError` for a cursor not issued for this job and attempt, and
   * `JobNotFoundError` when the job does not exist (its lines go with it).
   */
  async getLogs(id: number, query: JobLogQuery = {}): Promise<JobLogPage> {
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) throw new InvalidQueryError('id', 'a positive integer', id);
    const { attempt, level, limit, cursor } = normalizeLogQuery(query);
    // A level joins the scope only when given: a cursor issued before there were levels stays valid.
    const scope = `logs:${id}:${attempt ?? '*'}${level === null ? '' : `:${level}`}`;
    const after = cursor === null ? null : decodeCursor(cursor, scope);
    const rows = await readLogLines(this.db, id, attempt, level, after, limit + 1);
    if (!rows.length && after === null && !(await jobExists(this.db, id))) throw new JobNotFoundError(id);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      logs: page.map((r) => ({
        attempt: Number(r.attempt),
        at: this.db.dialect.parseTime(r.logged_at) ?? new Date(NaN),
        level: r.level === 'error' ? 'error' : 'info',
        message: String(r.message),
      })),
      nextCursor: rows.length > limit ? encodeCursor(Number(last.id), scope) : null,
    };
  }
}

const QUERY_FIELDS = ['attempt', 'level', 'limit', 'cursor'];

function normalizeLogQuery(raw: unknown): { attempt: number | null; level: JobLogLevel | null; limit: number; cursor: string | null } {
  if (raw === undefined || raw === null) return { attempt: null, level: null, limit: DEFAULT_LOG_PAGE, cursor: null };
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new InvalidQueryError('query', 'a plain object { attempt, level, limit, cursor }', raw);
  const o = raw as Record<string, unknown>;
  for (const field of Object.keys(o)) {
    if (!QUERY_FIELDS.includes(field)) throw new InvalidQueryError(`query.${field}`, `one of ${QUERY_FIELDS.join(', ')}`, field);
  }
  const level = o.level ?? null;
  if (level !== null && !JOB_LOG_LEVELS.includes(level as JobLogLevel)) throw new InvalidQueryError('level', `one of ${JOB_LOG_LEVELS.join(', ')}`, level);
  const attempt = o.attempt ?? null;
  if (attempt !== null && (typeof attempt !== 'number' || !Number.isSafeInteger(attempt) || attempt < 1)) {
    throw new InvalidQueryError('attempt', 'a positive integer', attempt);
  }
  const limit = o.limit ?? DEFAULT_LOG_PAGE;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LOG_PAGE) {
    throw new InvalidQueryError('limit', `an integer from 1 to ${MAX_LOG_PAGE}`, limit);
  }
  const cursor = o.cursor ?? null;
  if (cursor !== null && typeof cursor !== 'string') throw new InvalidQueryError('cursor', 'a string from nextCursor, or null', cursor);
  return { attempt: attempt as number | null, level: level as JobLogLevel | null, limit, cursor: cursor as string | null };
}
