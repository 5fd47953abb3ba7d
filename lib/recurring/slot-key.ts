import { isScheduleName } from './schedule-definition';

const PREFIX = 'recurring:';
/** `:` and an ISO 8601 slot as `Date#toISOString` writes it for years 0-9999 (24 characters). */
const SLOT_TAIL = 25;

/**
 * The key of the job schedule `name` enqueues for `slot`. Keys are unique in `jobs`, which is what
 * makes a slot run once across the cluster; the dashboard finds a schedule's last job by it.
 */
export function slotKey(name: string, slot: Date): string {
  return `${PREFIX}${name}:${slot.toISOString()}`;
}

/**
 * The schedule and slot a job's key names (pure), or null for any other key: a key the
 * application chose may start with `recurring:` too, so the slot must read back exactly.
 */
export function slotOfKey(key: string | null): { name: string; slot: Date } | null {
  if (key === null || !key.startsWith(PREFIX) || key.length < PREFIX.length + 1 + SLOT_TAIL || key[key.length - SLOT_TAIL] !== ':') return null;
  const name = key.slice(PREFIX.length, key.length - SLOT_TAIL);
  const text = key.slice(key.length - SLOT_TAIL + 1);
  const slot = new Date(text);
  if (!isScheduleName(name) || Number.isNaN(slot.getTime()) || slot.toISOString() !== text) return null;
  return { name, slot };
}
