import { InvalidQueryError } from '../errors/query.errors';
import { isPlainObject } from '../query/job-filter';
import type { PausedEntry } from './pause-target';

/** What `findPaused` selects; every field optional. */
export interface PausedFilter {
  /** Only paused types, or only paused groups. */
  kind?: 'type' | 'group';
}

/** A pause as `findPaused` shows it: the type or the group, and since when. */
export interface PausedView {
  type?: string;
  group?: string;
  pausedAt: Date;
}

export interface FindPausedResult {
  /** Groups first, then types, each by name (in the database's order for text). */
  paused: PausedView[];
  /** Pass as `cursor` for the next page; null when there is nothing more. */
  nextCursor: string | null;
}

/** Validates a `findPaused` filter (pure); throws `InvalidQueryError` naming the bad field. */
export function normalizePausedFilter(raw: unknown): PausedFilter {
  if (raw === undefined || raw === null) return {};
  if (!isPlainObject(raw)) throw new InvalidQueryError('filter', "a plain object { kind?: 'type' | 'group' }", raw);
  const out: PausedFilter = {};
  for (const field of Object.keys(raw)) {
    if (field !== 'kind') throw new InvalidQueryError(`filter.${field}`, 'one of the known fields (kind)', field);
    const value = raw[field];
    if (value === undefined) continue;
    if (value !== 'type' && value !== 'group') throw new InvalidQueryError('kind', "'type' or 'group'", value);
    out.kind = value;
  }
  return out;
}

/** The filter as the cursor's hash sees it: equal filters, equal text. */
export function pausedFilterText(filter: PausedFilter): string {
  return JSON.stringify(['paused', filter.kind ?? null]);
}

/**
 * The position after a page's last entry as one text key (the cursor carries it): the kind, a
 * newline, the name. A kind never holds a newline, so the first one splits them whatever the name.
 */
export function pausedKey(entry: PausedEntry): string {
  return `${entry.kind}\n${entry.name}`;
}

/** The entry of a `pausedKey`; null for a key no page could have ended with. */
export function fromPausedKey(key: string): PausedEntry | null {
  const at = key.indexOf('\n');
  const kind = key.slice(0, at);
  if (at < 0 || (kind !== 'type' && kind !== 'group')) return null;
  return { kind, name: key.slice(at + 1) };
}
