import { isScheduleName } from './schedule-definition';

export const SLOT_KEY_PREFIX = 'recurring:';
/** `:` and an ISO 8601 slot as `Date#toISOString` writes it for years 0-9999 (24 characters). */
export const SLOT_KEY_TAIL = 25;

/**
 * The key of the job schedule `name` enqueues for `slot`. Keys are unique in `jobs`, which is what
 * makes a slot run once across the cluster; the dashboard finds a schedule's last job by it.
 */
export function slotKey(name: string, slot: Date): string {
  return `${SLOT_KEY_PREFIX}${name}:${slot.toISOString()}`;
}

/**
 * What every slot key of schedule `name` holds before its last SLOT_KEY_TAIL characters (pure):
 * `find({ schedule })` compares keys cut so, which keeps `a` apart from `a:b`, whose keys start
 * with `recurring:a:` too.
 */
export function slotKeyPrefix(name: string): string {
  return `${SLOT_KEY_PREFIX}${name}`;
}

/**
 * The schedule and slot a job's key names (pure), or null for any other key: a key the
 * application chose may start with `recurring:` too, so the slot must read back exactly.
 */
export function slotOfKey(key: string | null): { name: string; slot: Date } | null {
  if (key === null || !key.startsWith(SLOT_KEY_PREFIX) || key.length < SLOT_KEY_PREFIX.length + 1 + SLOT_KEY_TAIL || key[key.length - SLOT_KEY_TAIL] !== ':') return null;
  const name = key.slice(SLOT_KEY_PREFIX.length, key.length - SLOT_KEY_TAIL);
  const text = key.slice(key.length - SLOT_KEY_TAIL + 1);
  const slot = new Date(text);
  if (!isScheduleName(name) || Number.isNaN(slot.getTime()) || slot.toISOString() !== text) return null;
  return { name, slot };
}
