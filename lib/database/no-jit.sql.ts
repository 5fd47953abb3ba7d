import { sql, type Sql } from './sql';

/**
 * PostgreSQL: no JIT compilation for the rest of the transaction. For statements whose planned
 * cost passes `jit_above_cost` only because the planner counts rows they never read (a bounded
 * graph walk, retention's per-row probes): compiling them cost more than running them.
 */
export function noJitStatement(): Sql {
  return sql`SET LOCAL jit = off`;
}
