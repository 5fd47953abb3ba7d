import type { SqlDialect } from '../database/dialects';
import { sql, type Sql } from '../database/sql';

/** A job to walk from, the neighbour it was reached from (0: none known) and its share of the rows. */
export interface ReachSeed {
  id: number;
  prev: number;
  budget: number;
}

/** Levels one reach statement walks at most: MySQL 8 stops recursion at 1,000 (`cte_max_recursion_depth`), MariaDB too. */
export const REACH_DEPTH = 500;

/**
 * Rows one reach statement may return, shared by its seeds. Each row passes what is left of its
 * budget on to its neighbours, split evenly, and a job is not walked on when its share would drop
 * below one row: a chain walks hundreds of levels in one statement, a fan-out stops at its root.
 */
export const REACH_BUDGET = 2_000;

/**
 * Several levels of the walk in one statement: every walk of at most `REACH_DEPTH` hops from the
 * seeds that never steps straight back (UNION ALL: a job reached by two paths comes twice, the
 * client keeps its fewest hops). Each row carries its `deg` (neighbours, counted up to the budget)
 * so that the client can tell which rows were walked on and which levels are therefore complete.
 * Bounded by the budget, not by the graph: a row with budget b yields at most b - 1 rows below it
 * (a seed twice that, since it has no step back to skip), and no row counts more than the budget.
 */
export function graphReachStatement(d: SqlDialect, seeds: readonly ReachSeed[]): Sql {
  if (d.name === 'postgres') return postgresReach(seeds);
  const seedRows = sql.join(
    seeds.map((s) => (d.name === 'mysql' ? sql`SELECT CAST(${s.id} AS SIGNED), CAST(${s.prev} AS SIGNED), CAST(${s.budget} AS SIGNED)` : sql`SELECT ${s.id}, ${s.prev}, ${s.budget}`)),
    ' UNION ALL ',
  );
  const deg = d.name === 'mysql' ? mysqlDegree : limitedDegree;
  const div = sql.raw(d.name === 'mysql' ? 'DIV' : '/');
  const max = sql.raw(d.name === 'mysql' ? 'GREATEST' : 'MAX');
  // One recursive part per relation (MySQL and SQLite take several, each naming the walk once).
  // The walk's row comes first (CROSS JOIN in SQLite, STRAIGHT_JOIN in MySQL fix the order):
  // with statistics of small tables SQLite scanned job_deps and the parent index for each row.
  // And SQLite would read a job's parent by scanning the partial parent index (`parent_id <>
  // prev` matches its WHERE): NOT INDEXED leaves it the rowid lookup.
  const join = sql.raw(d.name === 'mysql' ? 'STRAIGHT_JOIN' : 'CROSS JOIN');
  const step = (neighbour: string, from: string, on: string) => sql`SELECT ${sql.raw(neighbour)}, w.id, w.depth + 1, (w.budget - 1) ${div} ${max}(w.deg - 1, 1), ${deg(neighbour)}
    FROM walk w ${join} ${sql.raw(from)} ON ${sql.raw(on)} = w.id
    WHERE w.depth < ${sql.raw(String(REACH_DEPTH))} AND w.budget > w.deg AND ${sql.raw(neighbour)} <> w.prev`;
  return sql`WITH RECURSIVE seeds (id, prev, budget) AS (${seedRows}),
    walk (id, prev, depth, budget, deg) AS (
      SELECT s.id, s.prev, 0, s.budget, ${deg('s.id')} FROM seeds s
      UNION ALL ${step('d.depends_on_id', 'job_deps d', 'd.job_id')}
      UNION ALL ${step('d.job_id', 'job_deps d', 'd.depends_on_id')}
      UNION ALL ${step('c.id', 'jobs c', 'c.parent_id')}
      UNION ALL ${step('p.parent_id', d.name === 'sqlite' ? 'jobs p NOT INDEXED' : 'jobs p', 'p.id')})
    SELECT id, prev, depth, budget, deg FROM walk`;
}

/** PostgreSQL names the walk once in its recursive part: the four relations are one LATERAL list. */
function postgresReach(seeds: readonly ReachSeed[]): Sql {
  const seedRows = sql.join(
    seeds.map((s) => sql`SELECT CAST(${s.id} AS bigint), CAST(${s.prev} AS bigint), CAST(${s.budget} AS bigint)`),
    ' UNION ALL ',
  );
  return sql`WITH RECURSIVE seeds (id, prev, budget) AS (${seedRows}),
    walk (id, prev, depth, budget, deg) AS (
      SELECT s.id, s.prev, 0, s.budget, ${limitedDegree('s.id')} FROM seeds s
      UNION ALL SELECT n.id, w.id, w.depth + 1, (w.budget - 1) / GREATEST(w.deg - 1, 1), ${limitedDegree('n.id')}
      FROM walk w CROSS JOIN LATERAL (
        SELECT depends_on_id AS id FROM job_deps WHERE job_id = w.id
        UNION ALL SELECT job_id FROM job_deps WHERE depends_on_id = w.id
        UNION ALL SELECT id FROM jobs WHERE parent_id = w.id
        UNION ALL SELECT parent_id FROM jobs WHERE id = w.id AND parent_id IS NOT NULL) n
      WHERE w.depth < ${sql.raw(String(REACH_DEPTH))} AND w.budget > w.deg AND n.id <> w.prev)
    SELECT id, prev, depth, budget, deg FROM walk`;
}

const CAP = String(REACH_BUDGET);

/** Neighbours of `job` (a column), each relation counted up to the budget: a hub's 1,000,000 dependents are not all counted. */
function limitedDegree(job: string): Sql {
  const j = sql.raw(job);
  const cap = sql.raw(CAP);
  return sql`((SELECT COUNT(*) FROM (SELECT 1 FROM job_deps x WHERE x.job_id = ${j} LIMIT ${cap}) ups)
    + (SELECT COUNT(*) FROM (SELECT 1 FROM job_deps x WHERE x.depends_on_id = ${j} LIMIT ${cap}) downs)
    + (SELECT COUNT(*) FROM (SELECT 1 FROM jobs x WHERE x.parent_id = ${j} LIMIT ${cap}) kids)
    + (SELECT COUNT(x.parent_id) FROM jobs x WHERE x.id = ${j}))`;
}

/**
 * MySQL and MariaDB refuse outer columns in a derived table: the budget-th entry, if there is
 * one, stands for the count; otherwise the count itself (then below the budget).
 */
function mysqlDegree(job: string): Sql {
  const j = sql.raw(job);
  const cap = sql.raw(CAP);
  const nth = sql.raw(String(REACH_BUDGET - 1));
  const capped = (table: string, column: string) => {
    const [t, c] = [sql.raw(table), sql.raw(column)];
    return sql`COALESCE((SELECT ${cap} FROM ${t} x WHERE x.${c} = ${j} LIMIT 1 OFFSET ${nth}), (SELECT COUNT(*) FROM ${t} x WHERE x.${c} = ${j}))`;
  };
  return sql`(${capped('job_deps', 'job_id')} + ${capped('job_deps', 'depends_on_id')} + ${capped('jobs', 'parent_id')}
    + (SELECT COUNT(x.parent_id) FROM jobs x WHERE x.id = ${j}))`;
}
