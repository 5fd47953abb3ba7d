import { chunked, LIST_CHUNK, MAX_BOUND_PARAMETERS, sql } from '../../lib/database/sql';

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
