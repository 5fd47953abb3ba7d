import { BadRequestException } from '@nestjs/common';
import type { FindOptions, JobFilter } from 'nestjs-sql-job-queue';

/** The query string of `GET /jobs`. */
export interface JobsQuery {
  state?: string;
  type?: string;
  group?: string;
  /** JSON object, e.g. `{"tenant":"acme"}`: jobs whose args contain it. */
  args?: string;
  cursor?: string;
  limit?: string;
}

/**
 * Turns `?state=failed,cancelled&type=render&group=acme&args={"tenant":"acme"}&limit=20&cursor=…`
 * into a find() filter. Only the transport is checked here (JSON syntax, a number); the library
 * validates the values and answers InvalidQueryError, which the error filter maps to 400.
 */
export function parseJobsQuery(query: JobsQuery): { filter: JobFilter; options: FindOptions } {
  const filter: Record<string, unknown> = {};
  const known = ['state', 'type', 'group', 'args', 'cursor', 'limit'];
  const unknown = Object.keys(query).filter((k) => !known.includes(k));
  if (unknown.length) throw new BadRequestException(`Unknown query parameter "${unknown[0]}"; use ${known.join(', ')}.`);
  const list = (v: string) => (v.includes(',') ? v.split(',') : v);
  if (query.state !== undefined) filter.state = list(query.state);
  if (query.type !== undefined) filter.type = list(query.type);
  if (query.group !== undefined) filter.group = query.group;
  if (query.args !== undefined) {
    try {
      filter.argsContains = JSON.parse(query.args);
    } catch {
      throw new BadRequestException('"args" must be a JSON object, e.g. args={"tenant":"acme"}.');
    }
  }
  const options: FindOptions = {};
  if (query.cursor !== undefined) options.cursor = query.cursor;
  if (query.limit !== undefined) {
    if (!/^\d+$/.test(query.limit)) throw new BadRequestException('"limit" must be a whole number from 1 to 500.');
    options.limit = Number(query.limit);
  }
  return { filter: filter as JobFilter, options };
}
