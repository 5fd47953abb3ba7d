import { isUniqueViolation } from '../database/db-errors';
import { KeyConflictError } from '../errors';
import type { PreparedGraph } from './graph-enqueuer';

/**
 * The error an enqueue of `graph` throws for `err` (pure): a unique violation of a graph with
 * keys is a key race lost to a concurrent transaction (keys are unique within a graph, ids are
 * the database's), a KeyConflictError; anything else as it is. Inside an application's
 * transaction two requests enqueueing one idempotency key at once got the raw driver error.
 */
export function keyConflict(err: unknown, graph: PreparedGraph): unknown {
  if (!isUniqueViolation(err)) return err;
  const keys: string[] = [];
  for (const job of graph.jobs) if (job.key !== null) keys.push(job.key);
  return keys.length ? new KeyConflictError(keys, err) : err;
}
