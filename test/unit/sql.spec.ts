import { chunked, JOIN_PARTS_KEPT, LIST_CHUNK, MAX_BOUND_PARAMETERS, sql, type Sql } from '../../lib/database/sql';

describe('sql tagged template', () => {
  const q = sql`SELECT * FROM jobs WHERE id IN (${sql.list([1, 2])}) AND type = ${"it's"}${sql` AND g = ${'a'}`}`;

  it('numbers placeholders for PostgreSQL, nested fragments included', () => {
    expect(q.render('postgres')).toEqual({
      text: 'SELECT * FROM jobs WHERE id IN ($1, $2) AND type = $3 AND g = $4',
      params: [1, 2, "it's", 'a'],
    });
  });

  it('uses ? elsewhere and never inlines a value', () => {
    expect(q.render('mysql').text).toBe('SELECT * FROM jobs WHERE id IN (?, ?) AND type = ? AND g = ?');
    expect(q.render('sqlite').params).toEqual([1, 2, "it's", 'a']);
  });
});

describe('bounded lists', () => {
  it('chunked() slices in order, the last slice shorter', () => {
    expect(chunked([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunked([], 2)).toEqual([]);
    expect(chunked(Array.from({ length: 2_500 }, (_, i) => i)).map((c) => c.length)).toEqual([LIST_CHUNK, LIST_CHUNK, 500]);
    expect(() => chunked([1], 0)).toThrow(/at least 1/);
  });

  it('refuses to render a statement over the dialect bind limit, naming the limit', () => {
    const ids = Array.from({ length: MAX_BOUND_PARAMETERS.sqlite + 1 }, (_, i) => i);
    const q = sql`UPDATE jobs SET state = 'ready' WHERE id IN (${sql.list(ids)})`;
    expect(() => q.render('sqlite')).toThrow(/binds 32767 parameters, over sqlite's limit of 32766: UPDATE jobs/);
    expect(q.render('mysql').params).toHaveLength(ids.length); // under 65,535
    expect(() => sql`${sql.list(Array.from({ length: 65_536 }, () => 1))}`.render('postgres')).toThrow(/limit of 65535/);
  });
});

describe('statement shapes (Sql.collect)', () => {
  function shape(statement: Sql): { keys: unknown[]; params: unknown[] } {
    const keys: unknown[] = [];
    const params: unknown[] = [];
    statement.collect(params, (k) => keys.push(k) > 0);
    return { keys, params };
  }
  const sameKeys = (a: unknown[], b: unknown[]) => a.length === b.length && a.every((k, i) => Object.is(k, b[i]));
  const where = (v: unknown) => sql`SELECT id FROM jobs WHERE ${v}`;
  const one = (id: unknown) => sql`id = ${id}`;
  // One template, a parameter and a fragment in either order: different texts, same pieces.
  const pair = (a: unknown, b: unknown) => sql`SELECT ${a}, ${b}`;
  const statements: Sql[] = [
    where(one(1)),
    where(one(2)),
    where(sql.raw('TRUE')),
    where(sql.raw('FALSE')),
    where(3),
    pair(1, one(2)),
    pair(one(2), 1),
    pair(sql.list([1, 2]), 3),
    pair(1, sql.list([2, 3])),
    sql`x IN (${sql.list([1, 2])})`,
    sql`x IN (${sql.list([1, 2, 3])})`,
    sql`x IN (${sql.list([one(1), 2])})`,
    sql.join([one(1), one(2)], ' AND '),
    sql.join([one(1), one(2)], ' OR '),
    sql.join([one(1), one(2), one(3)], ' AND '),
  ];

  it('collects the parameters render binds, in the same order', () => {
    for (const s of statements) expect(shape(s).params).toEqual(s.render('sqlite').params);
  });

  it('gives equal keys only to statements that render the same text', () => {
    // The other way round is allowed: two shapes of one text only prepare it twice.
    for (const a of statements) {
      for (const b of statements) {
        if (!sameKeys(shape(a).keys, shape(b).keys)) continue;
        expect(a.render('sqlite').text).toBe(b.render('sqlite').text);
      }
    }
    expect(sameKeys(shape(pair(1, one(2))).keys, shape(pair(one(2), 1)).keys)).toBe(false);
    expect(sameKeys(shape(pair(sql.list([1, 2]), 3)).keys, shape(pair(1, sql.list([2, 3]))).keys)).toBe(false);
  });

  it('names a join by one strings array per separator and length, so repeated joins share a shape', () => {
    expect(sameKeys(shape(sql.join([one(1), one(2)], ' AND ')).keys, shape(sql.join([one(7), one(8)], ' AND ')).keys)).toBe(true);
    expect(sql.join([one(1), one(2), one(3)], ' AND ').render('postgres').text).toBe('id = $1 AND id = $2 AND id = $3');
  });

  it('keeps no strings array for a join too long for any cached shape (one per batch size piled up)', () => {
    const parts = (n: number) => Array.from({ length: n }, (_, i) => one(i));
    expect(sql.join(parts(JOIN_PARTS_KEPT)).strings).toBe(sql.join(parts(JOIN_PARTS_KEPT)).strings);
    const long = sql.join(parts(JOIN_PARTS_KEPT + 1));
    expect(long.strings).not.toBe(sql.join(parts(JOIN_PARTS_KEPT + 1)).strings);
    expect(long.render('sqlite').text).toBe(Array.from({ length: JOIN_PARTS_KEPT + 1 }, () => 'id = ?').join(', '));
    // Such a join is past the SQLite trie's key limit anyway: 1 key for the join, 2 per part.
    expect(shape(long).keys.length).toBeGreaterThan(2 * JOIN_PARTS_KEPT);
  });
});
