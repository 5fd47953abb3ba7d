/**
 * A PostgreSQL array parameter as its text, built once: the driver sends what `toPostgres` returns
 * as it is, where an array is serialized element by element on every query.
 */
export class PgArrayLiteral {
  constructor(readonly text: string) {}

  toPostgres(): string {
    return this.text;
  }

  static ofText(items: readonly string[]): PgArrayLiteral {
    return new PgArrayLiteral(`{${items.map((s) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`);
  }

  static ofInt(items: readonly number[]): PgArrayLiteral {
    return new PgArrayLiteral(`{${items.map((n) => String(Math.trunc(n))).join(',')}}`);
  }
}
