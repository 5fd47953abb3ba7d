import { ArgsNotSerializableError, ArgsTooLargeError, InvalidJobError } from '../errors';
import { isStorableText, STORABLE_TEXT } from '../options/storable-text';
import { isStorableTime, STORABLE_TIME } from '../options/storable-time';
import type { EnqueueInput } from '../job.types';
import { KEY_MODES, type KeyMode } from './key-mode';

export const MAX_TYPE_LENGTH = 200;
export const MAX_GROUP_LENGTH = 200;
export const MAX_KEY_LENGTH = 255;
export const MAX_INT = 2_147_483_647;

/** An enqueue input checked and reduced to the values a row is written from. */
export interface NormalizedJob {
  type: string;
  argsJson: string;
  group: string;
  weight: number;
  priority: number;
  runAfter: Date | null;
  maxAttempts: number;
  timeoutMs: number | null;
  key: string | null;
  /** How the key dedupes (see KeyMode); `forever` when no key or mode is given. */
  keyMode: KeyMode;
  /** `debounceMs` or `throttleMs`, for those modes. */
  keyWindowMs: number | null;
}

export interface NormalizeContext {
  maxArgsBytes: number;
  defaultMaxAttempts: number;
  defaultTimeoutMs: number | null;
  groupWeights: Record<string, number>;
  /** Defaults a locally registered handler declares for its type. */
  handlerDefaults(type: string): { maxAttempts?: number; timeoutMs?: number } | undefined;
}

/** Validates one job's fields. Pure; throws a typed error naming the field and the job's ref. */
export function normalizeJob(input: EnqueueInput, ctx: NormalizeContext, ref?: string): NormalizedJob {
  if (typeof input !== 'object' || input === null) {
    throw new InvalidJobError('(job)', 'an object { type, args, ... }', input, ref);
  }
  const type = boundedString(input.type, 'type', MAX_TYPE_LENGTH, ref);
  const group = input.group === undefined ? 'default' : boundedString(input.group, 'group', MAX_GROUP_LENGTH, ref);
  const key = input.key === undefined || input.key === null ? null : boundedString(input.key, 'key', MAX_KEY_LENGTH, ref);
  const handler = ctx.handlerDefaults(type);
  const argsJson = serializeArgs(input.args, ctx.maxArgsBytes, ref);
  let runAfter: Date | null = null;
  if (input.runAfter !== undefined && input.runAfter !== null) {
    if (!(input.runAfter instanceof Date) || isNaN(input.runAfter.getTime()) || !isStorableTime(input.runAfter)) {
      throw new InvalidJobError('runAfter', `a valid Date ${STORABLE_TIME}`, input.runAfter, ref);
    }
    runAfter = input.runAfter;
  }
  const { keyMode, keyWindowMs } = keyPolicy(input, key, ref);
  return {
    type,
    argsJson,
    group,
    // Own keys only: a group named `constructor` or `toString` read Object.prototype's member as its weight.
    weight: integer(input.weight, 'weight', Object.hasOwn(ctx.groupWeights, group) ? ctx.groupWeights[group] : 1, 1, 1_000_000, ref),
    priority: integer(input.priority, 'priority', 0, 0, MAX_INT, ref),
    runAfter,
    maxAttempts: integer(input.maxAttempts, 'maxAttempts', handler?.maxAttempts ?? ctx.defaultMaxAttempts, 1, 1_000_000, ref),
    timeoutMs:
      input.timeoutMs === undefined
        ? (handler?.timeoutMs ?? ctx.defaultTimeoutMs)
        : integer(input.timeoutMs, 'timeoutMs', 0, 1, MAX_INT, ref),
    key,
    keyMode,
    keyWindowMs,
  };
}

/** `keyMode` with its window: checked together, so a mode never runs with a missing or stray window. */
function keyPolicy(input: EnqueueInput, key: string | null, ref?: string): { keyMode: KeyMode; keyWindowMs: number | null } {
  const mode = input.keyMode;
  if (mode !== undefined && !KEY_MODES.includes(mode)) {
    throw new InvalidJobError('keyMode', `one of ${KEY_MODES.map((m) => `'${m}'`).join(', ')}`, mode, ref);
  }
  if (mode !== undefined && mode !== 'forever' && key === null) throw new InvalidJobError('key', `a key with keyMode '${mode}'`, input.key, ref);
  for (const [field, wanted] of [['debounceMs', 'debounce'], ['throttleMs', 'throttle']] as const) {
    const value = input[field];
    if (mode === wanted) {
      if (value === undefined) throw new InvalidJobError(field, `an integer from 1 to ${MAX_INT} with keyMode '${wanted}'`, value, ref);
      integer(value, field, 0, 1, MAX_INT, ref);
    } else if (value !== undefined) {
      throw new InvalidJobError(field, `left out unless keyMode is '${wanted}'`, value, ref);
    }
  }
  const keyMode = mode ?? 'forever';
  const keyWindowMs = keyMode === 'debounce' ? input.debounceMs! : keyMode === 'throttle' ? input.throttleMs! : null;
  return { keyMode, keyWindowMs };
}

function boundedString(value: unknown, field: string, max: number, ref?: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > max || !isStorableText(value)) {
    throw new InvalidJobError(field, `a non-empty string of at most ${max} characters ${STORABLE_TEXT}`, value, ref);
  }
  return value;
}

function integer(value: unknown, field: string, fallback: number, min: number, max: number, ref?: string): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidJobError(field, `an integer from ${min} to ${max}`, value, ref);
  }
  return value;
}

/**
 * JSON.stringify silently drops functions and symbols and throws an unhelpful message on
 * BigInt and cycles; a job would then run with different args than the caller passed. Walk
 * the value first and name the offending path. Strings and keys holding NUL or an unpaired
 * surrogate are refused too: PostgreSQL's jsonb refuses them (the insert failed with a raw
 * database error), MariaDB's JSON functions read such a document as invalid and SQLite's cut
 * or re-encode it, so `argsContains` would answer differently on each.
 */
export function serializeArgs(args: unknown, maxBytes: number, ref?: string): string {
  assertJsonSafe(args, '', new Set(), ref);
  const json = args === undefined ? 'null' : JSON.stringify(args);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > maxBytes) throw new ArgsTooLargeError(bytes, maxBytes, ref);
  return json;
}

function assertJsonSafe(value: unknown, path: string, ancestors: Set<object>, ref?: string): void {
  switch (typeof value) {
    case 'function':
      throw new ArgsNotSerializableError(path, 'is a function', ref);
    case 'symbol':
      throw new ArgsNotSerializableError(path, 'is a symbol', ref);
    case 'bigint':
      throw new ArgsNotSerializableError(path, 'is a BigInt', ref);
    case 'object': {
      if (value === null) return;
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return; // Date and friends
      if (value instanceof Map || value instanceof Set) {
        throw new ArgsNotSerializableError(path, `is a ${value.constructor.name}, which JSON turns into {}`, ref);
      }
      if (ancestors.has(value)) throw new ArgsNotSerializableError(path, 'refers back to itself (a cycle)', ref);
      ancestors.add(value);
      if (Array.isArray(value)) {
        value.forEach((item, i) => assertJsonSafe(item, `${path}[${i}]`, ancestors, ref));
      } else {
        for (const [k, v] of Object.entries(value)) {
          if (!isStorableText(k)) throw new ArgsNotSerializableError(`${path}.${JSON.stringify(k)}`, 'is a key holding a NUL character or an unpaired surrogate, which not every database stores', ref);
          assertJsonSafe(v, `${path}.${k}`, ancestors, ref);
        }
      }
      ancestors.delete(value);
      return;
    }
    case 'string':
      if (!isStorableText(value)) throw new ArgsNotSerializableError(path, 'is a string holding a NUL character or an unpaired surrogate, which not every database stores', ref);
      return;
    default:
      return;
  }
}
