import { jobColumns } from '../database/job-row';
import { sql, type Sql } from '../database/sql';
import type { SqlDialect } from '../database/dialects';
import { storedBytes } from '../database/stored-bytes';

/** Ids per statement: four lists of this many stay far below every driver's bind limit. */
export const GRAPH_CHUNK = 500;

/**
 * The direct neighbours of some jobs, both directions of both relations: their upstreams and
 * dependents (`job_deps`, both indexed) and their parent and children (`parent_id`). The parents
 * are read by id: `+parent_id` keeps SQLite from reading the whole partial parent index (its
 * WHERE matches `parent_id IS NOT NULL`), which it chose when its statistics were taken while few
 * jobs had a parent (a 1,000-node walk beside 100,000 children: 93-142 ms instead of 8-10 ms).
 */
export function neighboursStatement(ids: readonly number[]): Sql {
  const list = () => sql.list(ids);
  return sql`SELECT depends_on_id AS id FROM job_deps WHERE job_id IN (${list()})
    UNION SELECT job_id FROM job_deps WHERE depends_on_id IN (${list()})
    UNION SELECT id FROM jobs WHERE parent_id IN (${list()})
    UNION SELECT parent_id FROM jobs WHERE id IN (${list()}) AND +parent_id IS NOT NULL`;
}

/** Whether the job exists (the walk's start). */
export function graphRootStatement(id: number): Sql {
  return sql`SELECT id FROM jobs WHERE id = ${id}`;
}

/** The stored bytes of these jobs' args and results (see storedBytes), to bound what getGraph reads. */
export function graphNodeSizesStatement(d: SqlDialect, ids: readonly number[]): Sql {
  return sql`SELECT id, ${storedBytes(d)} AS bytes FROM jobs WHERE id IN (${sql.list(ids)})`;
}

export function graphNodesStatement(d: SqlDialect, ids: readonly number[]): Sql {
  return sql`SELECT ${jobColumns(d)} FROM jobs WHERE id IN (${sql.list(ids)})`;
}

/** Dependency edges of these dependents (the caller keeps those whose upstream is a node too). */
export function graphEdgesStatement(ids: readonly number[]): Sql {
  return sql`SELECT depends_on_id, job_id, allow_failure FROM job_deps WHERE job_id IN (${sql.list(ids)})`;
}
