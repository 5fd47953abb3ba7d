import { sql } from '../../lib/database/sql';

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
