import { InvalidPauseTargetError } from '../errors/query.errors';
import { isStorableText, STORABLE_TEXT } from '../options/storable-text';

/** What `pause`/`resume` take: a job type, or a group (e.g. a tenant). */
export type PauseTarget = { type: string; group?: never } | { group: string; type?: never };

export interface PausedEntry {
  kind: 'type' | 'group';
  name: string;
}

/** Validates a pause target (pure): exactly one of `type` or `group`, a string of 1–200 characters. */
export function normalizePauseTarget(raw: unknown): PausedEntry {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new InvalidPauseTargetError(raw, 'expected an object');
  const keys = Object.keys(raw);
  const unknown = keys.filter((k) => k !== 'type' && k !== 'group');
  if (unknown.length) throw new InvalidPauseTargetError(raw, `unknown field "${unknown[0]}"`);
  if (keys.length !== 1) throw new InvalidPauseTargetError(raw, keys.length ? 'give either type or group, not both' : 'nothing to pause (an empty object)');
  const kind = keys[0] as 'type' | 'group';
  const name = (raw as Record<string, unknown>)[kind];
  if (typeof name !== 'string' || !name.length || name.length > 200 || !isStorableText(name)) {
    throw new InvalidPauseTargetError(raw, `${kind} must be a non-empty string of at most 200 characters ${STORABLE_TEXT}`);
  }
  return { kind, name };
}

/** The public form of a stored entry. */
export function toPauseTarget(entry: PausedEntry): { type?: string; group?: string } {
  return entry.kind === 'type' ? { type: entry.name } : { group: entry.name };
}
