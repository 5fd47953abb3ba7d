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
    if (params.length > MAX_BOUND_PARAMETERS[dialect]) {
      throw new Error(`statement binds ${params.length} parameters, over ${dialect}'s limit of ${MAX_BOUND_PARAMETERS[dialect]}: ${text.slice(0, 120)}…`);
    }
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
  const strings = ['', ...parts.slice(1).map(() => separator), ''];
  return new Sql(strings, parts);
};
