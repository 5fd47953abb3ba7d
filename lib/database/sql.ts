import type { Dialect } from '../job-queue.options';

/**
 * A tiny tagged-template SQL builder: values become bound parameters, rendered as `$n` for
 * PostgreSQL and `?` elsewhere, so one statement text can serve several dialects without
 * ever concatenating a value into SQL.
 */
export class Sql {
  constructor(
    readonly strings: readonly string[],
    readonly values: readonly unknown[],
  ) {}

  render(dialect: Dialect): { text: string; params: unknown[] } {
    const params: unknown[] = [];
    const text = this.build(dialect, params);
    // A statement over the limit fails in the driver with a message that names no statement
    // (SQLite: "too many SQL variables"); every caller chunks its lists well below it.
    assertBoundParameters(dialect, params.length, text);
    return { text, params };
  }

  private build(dialect: Dialect, params: unknown[]): string {
    let text = this.strings[0];
    for (let i = 0; i < this.values.length; i++) {
      text += renderValue(this.values[i], dialect, params) + this.strings[i + 1];
    }
    return text;
  }

  /** @internal */
  buildInto(dialect: Dialect, params: unknown[]): string {
    return this.build(dialect, params);
  }

  /**
   * Collects the parameters as `render` does, without building the text: `key` receives, in
   * order, what fixes the text (each fragment's template strings, raw texts, list lengths, a
   * marker per parameter), so a cache can find a prepared statement by walking these keys
   * instead of hashing the whole text. Equal key sequences render equal texts. `key` returning
   * false stops the walk; collect then returns false (and `params` is incomplete).
   */
  collect(params: unknown[], key: (k: unknown) => boolean): boolean {
    if (!key(this.strings)) return false;
    for (let i = 0; i < this.values.length; i++) if (!collectValue(this.values[i], params, key)) return false;
    return true;
  }
}

/** The key a bound parameter contributes to a statement's shape. */
const PARAMETER = Symbol('parameter');

function collectValue(value: unknown, params: unknown[], key: (k: unknown) => boolean): boolean {
  if (value instanceof Sql) return value.collect(params, key);
  if (value instanceof RawSql) return key(value.text);
  if (value instanceof ListSql) {
    if (!key(value.items.length)) return false;
    for (const item of value.items) if (!collectValue(item, params, key)) return false;
    return true;
  }
  params.push(value);
  return key(PARAMETER);
}

class RawSql {
  constructor(readonly text: string) {}
}

class ListSql {
  constructor(readonly items: readonly unknown[]) {}
}

function renderValue(value: unknown, dialect: Dialect, params: unknown[]): string {
  if (value instanceof Sql) return value.buildInto(dialect, params);
  if (value instanceof RawSql) return value.text;
  if (value instanceof ListSql) {
    if (value.items.length === 0) throw new Error('sql.list() needs at least one item');
    return value.items.map((item) => renderValue(item, dialect, params)).join(', ');
  }
  params.push(value);
  return dialect === 'postgres' ? `$${params.length}` : '?';
}

export function assertBoundParameters(dialect: Dialect, count: number, text: string): void {
  if (count > MAX_BOUND_PARAMETERS[dialect]) {
    throw new Error(`statement binds ${count} parameters, over ${dialect}'s limit of ${MAX_BOUND_PARAMETERS[dialect]}: ${text.slice(0, 120)}…`);
  }
}

/** Bound parameters one statement may carry: SQLite's SQLITE_MAX_VARIABLE_NUMBER, the wire protocols' 16-bit count. */
export const MAX_BOUND_PARAMETERS: Readonly<Record<Dialect, number>> = { sqlite: 32_766, postgres: 65_535, mysql: 65_535 };

/**
 * Items per `sql.list` in one statement. Far below every limit, so a statement may bind a list
 * twice plus its other values; large enough that 100,000 ids are 100 statements.
 */
export const LIST_CHUNK = 1_000;

/** Splits `items` into slices of at most `size` (for `IN (…)` lists that must stay bounded). */
export function chunked<T>(items: readonly T[], size = LIST_CHUNK): T[][] {
  if (!(size >= 1)) throw new Error(`chunk size must be at least 1, got ${size}`);
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export function sql(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  return new Sql(strings, values);
}

/** Trusted SQL text (identifiers, keywords); never user input. */
sql.raw = (text: string): RawSql => new RawSql(text);

/** `a, b, c` as separate parameters, for `IN (…)` and `VALUES (…)`. */
sql.list = (items: readonly unknown[]): ListSql => new ListSql(items);

/** Joins fragments with a separator. */
sql.join = (parts: readonly Sql[], separator = ', '): Sql => {
  if (parts.length === 0) return sql``;
  return new Sql(joinStrings(separator, parts.length), parts);
};

/**
 * The template strings of a join, one array per separator and length: a statement's shape
 * (`Sql.collect`) names fragments by their strings' identity, as template literals have.
 */
const JOINS = new Map<string, Map<number, readonly string[]>>();
const JOIN_SHAPES_KEPT = 10_000;
/**
 * Joins of more parts are built afresh. Every part adds a key to the statement's shape, so such
 * a join always makes a shape too long for the SQLite statement trie (SHAPE_KEYS_MAX keys), which
 * finds those statements by their text: the identity of their strings serves nothing. Cached,
 * one array per length, edge inserts of every batch size up to 5,000 would hold 12.5 million slots.
 */
export const JOIN_PARTS_KEPT = 256;
let joinShapes = 0;

function joinStrings(separator: string, parts: number): readonly string[] {
  if (parts > JOIN_PARTS_KEPT) return ['', ...Array.from({ length: parts - 1 }, () => separator), ''];
  let strings = JOINS.get(separator)?.get(parts);
  if (strings) return strings;
  // A bound for separators built at run time; a cache that starts over only re-prepares.
  if (joinShapes >= JOIN_SHAPES_KEPT) {
    JOINS.clear();
    joinShapes = 0;
  }
  strings = Object.freeze(['', ...Array.from({ length: parts - 1 }, () => separator), '']);
  const bySeparator = JOINS.get(separator) ?? new Map<number, readonly string[]>();
  JOINS.set(separator, bySeparator.set(parts, strings));
  joinShapes++;
  return strings;
}
