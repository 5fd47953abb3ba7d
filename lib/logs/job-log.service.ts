import { Injectable } from '@nestjs/common';
import { JobQueueDatabase } from '../database/job-queue.database';
import { JobNotFoundError } from '../errors';
import { InvalidQueryError } from '../errors/query.errors';
import { decodeCursor, encodeCursor } from '../query/find-cursor';
import type { JobLogPage, JobLogQuery } from './job-log.types';
import { jobExists, readLogLines } from './job-logs.sql';

const DEFAULT_LOG_PAGE = 100;
export const MAX_LOG_PAGE = 1_000;

/** Reads the lines handlers wrote with `ctx.log()`. */
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
    const { attempt, limit, cursor } = normalizeLogQuery(query);
    const scope = `logs:${id}:${attempt ?? '*'}`;
    const after = cursor === null ? null : decodeCursor(cursor, scope);
    const rows = await readLogLines(this.db, id, attempt, after, limit + 1);
    if (!rows.length && after === null && !(await jobExists(this.db, id))) throw new JobNotFoundError(id);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      logs: page.map((r) => ({ attempt: Number(r.attempt), at: this.db.dialect.parseTime(r.logged_at) ?? new Date(NaN), message: String(r.message) })),
      nextCursor: rows.length > limit ? encodeCursor(Number(last.id), scope) : null,
    };
  }
}

function normalizeLogQuery(raw: unknown): { attempt: number | null; limit: number; cursor: string | null } {
  if (raw === undefined || raw === null) return { attempt: null, limit: DEFAULT_LOG_PAGE, cursor: null };
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new InvalidQueryError('query', 'a plain object { attempt, limit, cursor }', raw);
  const o = raw as Record<string, unknown>;
  for (const field of Object.keys(o)) {
    if (field !== 'attempt' && field !== 'limit' && field !== 'cursor') throw new InvalidQueryError(`query.${field}`, 'one of attempt, limit, cursor', field);
  }
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
  return { attempt: attempt as number | null, limit, cursor: cursor as string | null };
}
