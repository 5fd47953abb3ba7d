import { InvalidQueryError } from '../errors/query.errors';
import { isStorableText, STORABLE_TEXT } from '../options/storable-text';

export type JsonScalar = string | number | boolean | null;
export type JsonObject = { [key: string]: JsonScalar | JsonScalar[] | JsonObject };

/** One condition of an `argsContains` filter, flattened for databases without `@>` (SQLite). */
export type ArgsCondition =
  /** The value at `path` equals this scalar (same JSON type). */
  | { kind: 'equals'; path: string[]; value: JsonScalar }
  /** The value at `path` is an array holding this scalar. */
  | { kind: 'holds'; path: string[]; value: JsonScalar }
  /** The value at `path` is an object / an array (from `{}` and `[]` in the filter). */
  | { kind: 'is'; path: string[]; jsonType: 'object' | 'array' };

const MAX_BYTES = 4_096;
const MAX_DEPTH = 8;

/**
 * Validates an `argsContains` filter (pure): a plain object of plain objects, scalars and
 * arrays of scalars, as JSON; keys without `"`, `\` or control characters (they become JSON
 * paths on SQLite). Returns a copy.
 */
export function normalizeArgsContains(raw: unknown): JsonObject {
  const fail = (expected: string, received: unknown = raw): never => {
    throw new InvalidQueryError('argsContains', expected, received);
  };
  if (!isPlain(raw)) fail('a plain object such as { tenant: "acme" }');
  const walk = (value: unknown, depth: number, inArray: boolean): unknown => {
    if (typeof value === 'string') return isStorableText(value) ? value : fail(`strings ${STORABLE_TEXT}`, value);
    if (value === null || typeof value === 'boolean') return value;
    if (typeof value === 'number') return Number.isFinite(value) ? value : fail('JSON: numbers must be finite', value);
    if (Array.isArray(value)) {
      if (inArray) fail('arrays of scalars only (no nested arrays or objects in arrays)', value);
      return value.map((v) => walk(v, depth + 1, true));
    }
    if (isPlain(value)) {
      if (inArray) fail('arrays of scalars only (no nested arrays or objects in arrays)', value);
      if (depth >= MAX_DEPTH) fail(`at most ${MAX_DEPTH} levels deep`, value);
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        if (!k.length || /["\\\u0000-\u001f]/.test(k) || !isStorableText(k)) fail('keys that are non-empty and free of quotes, backslashes, control characters and unpaired surrogates', k);
        if (v === undefined) fail('JSON values (undefined is not one)', v);
        // Defined, not assigned: `out['__proto__'] = v` would set the prototype and drop the key,
        // turning `{ "__proto__": … }` (JSON.parse makes it an own key) into `{}`, which matches every job.
        Object.defineProperty(out, k, { value: walk(v, depth + 1, false), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    return fail('JSON: plain objects, arrays of scalars, strings, finite numbers, booleans or null', value);
  };
  const copy = walk(raw, 0, false) as JsonObject;
  const bytes = Buffer.byteLength(JSON.stringify(copy));
  if (bytes > MAX_BYTES) fail(`at most ${MAX_BYTES} bytes as JSON`, `${bytes} bytes`);
  return copy;
}

/** The conditions an `argsContains` object stands for, leaf by leaf (pure). */
export function flattenArgsContains(filter: JsonObject, prefix: string[] = []): ArgsCondition[] {
  const out: ArgsCondition[] = [];
  for (const [key, value] of Object.entries(filter)) {
    const path = [...prefix, key];
    if (Array.isArray(value)) {
      if (!value.length) out.push({ kind: 'is', path, jsonType: 'array' });
      for (const item of value) out.push({ kind: 'holds', path, value: item });
    } else if (value !== null && typeof value === 'object') {
      const inner = flattenArgsContains(value, path);
      out.push(...(inner.length ? inner : [{ kind: 'is' as const, path, jsonType: 'object' as const }]));
    } else {
      out.push({ kind: 'equals', path, value });
    }
  }
  return out;
}

/** `$."a"."b"`: a JSON path of quoted labels (keys were checked free of quotes). */
export function jsonPath(path: readonly string[]): string {
  return '$' + path.map((k) => `."${k}"`).join('');
}

function isPlain(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
