import { PgArrayLiteral } from '../../lib/database/pg-array-literal';

describe('PgArrayLiteral (pure)', () => {
  it('quotes every text element and escapes backslashes and double quotes', () => {
    expect(PgArrayLiteral.ofText([]).toPostgres()).toBe('{}');
    expect(PgArrayLiteral.ofText(['a', 'b c', 'd,e', 'f"g', 'h\\i', 'NULL', '{}']).toPostgres()).toBe('{"a","b c","d,e","f\\"g","h\\\\i","NULL","{}"}');
    expect(PgArrayLiteral.ofInt([1, 20, 3]).toPostgres()).toBe('{1,20,3}');
  });
});
