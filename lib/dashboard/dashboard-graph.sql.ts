import { sql, type Sql } from '../database/sql';

/** What the graph page draws of each node: never args, result or error, which may be megabytes each. */
export function graphNodeSummaries(ids: readonly number[]): Sql {
  return sql`SELECT id, type, ref, state, progress, current_stage, parent_id, is_container FROM jobs WHERE id IN (${sql.list(ids)})`;
}
