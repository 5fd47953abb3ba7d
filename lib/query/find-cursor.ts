import { createHash } from 'node:crypto';
import { InvalidCursorError } from '../errors/query.errors';

/**
 * The opaque `nextCursor` of `find` (pure). It carries the keyset position (ids below this one
 * come next) and a hash of the filter it belongs to, with a checksum: a cursor that was edited
 * or comes from another filter is refused instead of silently paging something else. The
 * checksum detects tampering, it is not a secret: a cursor only ever names a position.
 */
export function encodeCursor(beforeId: number, filterText: string): string {
  const payload = `1.${beforeId}.${digest(filterText, 12)}`;
  return Buffer.from(`${payload}.${digest(payload, 10)}`).toString('base64url');
}

/** The id the next page starts below; throws `InvalidCursorError` for anything not issued for this filter. */
export function decodeCursor(cursor: string, filterText: string): number {
  if (cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new InvalidCursorError(cursor, 'not a cursor');
  const parts = decodedText(cursor).split('.');
  if (parts.length !== 4 || parts[0] !== '1' || !/^[1-9]\d{0,15}$/.test(parts[1])) throw new InvalidCursorError(cursor, 'not a cursor');
  const payload = parts.slice(0, 3).join('.');
  if (digest(payload, 10) !== parts[3]) throw new InvalidCursorError(cursor, 'it was altered');
  if (digest(filterText, 12) !== parts[2]) throw new InvalidCursorError(cursor, 'it belongs to a different filter');
  const id = Number(parts[1]);
  if (!Number.isSafeInteger(id)) throw new InvalidCursorError(cursor, 'not a cursor');
  return id;
}

/**
 * The same for a page ordered by a text key (`findSchedules`: by name): the last key of the page,
 * base64url-encoded inside the payload, so any character of it survives.
 */
export function encodeKeyCursor(afterKey: string, filterText: string): string {
  const payload = `k.${Buffer.from(afterKey).toString('base64url')}.${digest(filterText, 12)}`;
  return Buffer.from(`${payload}.${digest(payload, 10)}`).toString('base64url');
}

/** The key the next page starts after; throws `InvalidCursorError` as `decodeCursor` does. */
export function decodeKeyCursor(cursor: string, filterText: string): string {
  if (cursor.length > 1_000 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new InvalidCursorError(cursor, 'not a cursor');
  const parts = decodedText(cursor).split('.');
  if (parts.length !== 4 || parts[0] !== 'k' || !/^[A-Za-z0-9_-]+$/.test(parts[1])) throw new InvalidCursorError(cursor, 'not a cursor');
  const payload = parts.slice(0, 3).join('.');
  if (digest(payload, 10) !== parts[3]) throw new InvalidCursorError(cursor, 'it was altered');
  if (digest(filterText, 12) !== parts[2]) throw new InvalidCursorError(cursor, 'it belongs to a different filter');
  return Buffer.from(parts[1], 'base64url').toString('utf8');
}

/**
 * The cursor's text. Only the canonical encoding is taken: the last base64 character of a cursor
 * whose length is not a multiple of 3 bytes carries 2 or 4 unused bits, so changing them changed
 * the characters but not the bytes, and such an edited cursor was read as the original.
 */
function decodedText(cursor: string): string {
  const bytes = Buffer.from(cursor, 'base64url');
  if (bytes.toString('base64url') !== cursor) throw new InvalidCursorError(cursor, 'it was altered');
  return bytes.toString('utf8');
}

function digest(text: string, length: number): string {
  return createHash('sha256').update(`nestjs-sql-job-queue:cursor:${text}`).digest('base64url').slice(0, length);
}
