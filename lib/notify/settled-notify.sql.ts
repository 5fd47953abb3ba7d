import { sql, type Sql } from '../database/sql';
import { SETTLED_CHANNEL } from './notify.sql';

/** Ids per notification: 390 ids of up to 19 digits and their commas stay under the 8,000-byte payload limit. */
export const IDS_PER_NOTIFICATION = 390;

/** The payloads announcing `ids` as settled: comma-separated, `IDS_PER_NOTIFICATION` per payload. */
export function settledPayloads(ids: readonly number[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < ids.length; i += IDS_PER_NOTIFICATION) out.push(ids.slice(i, i + IDS_PER_NOTIFICATION).join(','));
  return out;
}

/** PostgreSQL: one statement sending every payload on the settled channel. */
export function notifySettledStatement(payloads: string[]): Sql {
  return sql`SELECT pg_notify(${SETTLED_CHANNEL}, p) FROM unnest(${payloads}::text[]) AS p`;
}
