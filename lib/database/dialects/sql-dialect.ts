import type { Dialect } from '../../job-queue.options';
import { Sql } from '../sql';

/**
 * What differs between the three databases in the statements that PostgreSQL, MySQL and
 * SQLite can otherwise share: the clock, time arithmetic, and how time values travel.
 * Every timestamp is UTC and read from the database clock, never from a process clock,
 * so that workers on different hosts agree on which leases have expired.
 */
export interface SqlDialect {
  readonly name: Dialect;
  /** The database's current UTC time. */
  now(): Sql;
  /** `time + ms milliseconds`; `ms` may be a column expression or a bound number. */
  addMs(time: Sql, ms: Sql | number): Sql;
  /** Milliseconds between `from` and `to` (a number). */
  diffMs(from: Sql, to: Sql): Sql;
  /** A JS Date as a bound value of this dialect's time column. */
  timeParam(date: Date): unknown;
  /** A time column as read back by the driver → Date. */
  parseTime(value: unknown): Date | null;
  /** Select-list expression of a time column that `parseTime` understands on any session setting. */
  selectTime(column: string): Sql;
  /** `UPDATE … RETURNING` works (PostgreSQL, SQLite; not MySQL/MariaDB). */
  readonly supportsReturning: boolean;
}

export function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** `YYYY-MM-DD HH:MM:SS.mmm` in UTC: the text form MySQL DATETIME(3) and our SQLite columns use. */
export function utcText(date: Date): string {
  return (
    `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}.${pad(date.getUTCMilliseconds(), 3)}`
  );
}

/** Parses `YYYY-MM-DD HH:MM:SS[.fff…]` as UTC. */
export function parseUtcText(value: unknown): Date | null {
  if (value == null) return null;
  if (value instanceof Date) return value;
  const text = String(value);
  const d = new Date(text.replace(' ', 'T').replace(/(\.\d{3})\d+$/, '$1') + 'Z');
  return isNaN(d.getTime()) ? null : d;
}
