/**
 * Whether every database stores this instant and orders it among others (pure): MySQL's
 * DATETIME holds years 1000–9999 (a raw "Incorrect datetime value" outside), PostgreSQL refused
 * the ISO text of a five-digit or negative year, and SQLite's text form of a year below 1000 or
 * above 9999 sorted out of order: a `runAfter` in year 10000 ran at once, one in year 999 never,
 * and both read back as null.
 */
export function isStorableTime(date: Date): boolean {
  const t = date.getTime();
  return t >= EARLIEST_STORABLE && t <= LATEST_STORABLE;
}

const EARLIEST_STORABLE = Date.UTC(1000, 0, 1);
const LATEST_STORABLE = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** What the typed errors say is expected of such a time. */
export const STORABLE_TIME = 'from 1000-01-01 to 9999-12-31 (UTC)';
