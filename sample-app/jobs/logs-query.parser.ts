import { BadRequestException } from '@nestjs/common';
import type { JobLogQuery } from 'nestjs-sql-job-queue';

/**
 * `?attempt=2&level=error&limit=100&cursor=…` of `GET /jobs/:id/logs` into a getLogs() query. As for
 * `GET /jobs`, only the transport is checked here; the library answers InvalidQueryError (400).
 */
export function parseLogsQuery(query: Record<string, unknown>): JobLogQuery {
  const known = ['attempt', 'level', 'limit', 'cursor'];
  const unknown = Object.keys(query).filter((k) => !known.includes(k));
  if (unknown.length) throw new BadRequestException(`Unknown query parameter "${unknown[0]}"; use ${known.join(', ')}.`);
  const out: JobLogQuery = {};
  for (const field of ['attempt', 'limit'] as const) {
    const value = query[field];
    if (value === undefined) continue;
    if (typeof value !== 'string' || !/^\d+$/.test(value)) throw new BadRequestException(`"${field}" must be a whole number.`);
    out[field] = Number(value);
  }
  if (query.level !== undefined) {
    // `info` or `error`: getLogs refuses any other value with InvalidQueryError (400).
    if (typeof query.level !== 'string') throw new BadRequestException('"level" must be given once.');
    out.level = query.level as JobLogQuery['level'];
  }
  if (query.cursor !== undefined) {
    if (typeof query.cursor !== 'string') throw new BadRequestException('"cursor" must be given once.');
    out.cursor = query.cursor;
  }
  return out;
}
