import type { SqlExecutor } from '../database/sql-executor';
import { insertGraph, type PreparedGraph } from './graph-enqueuer';
import { debounceJob, keyHolder, lockKey, releaseKey, setKeyWindow } from './job-keys.sql';
import { decideKey } from './key-mode';

export interface KeyedOutcome {
  id: number;
  /** A new job was written as `ready` (the caller wakes workers). */
  created: boolean;
}

/**
 * One job with a key in mode `unfinished`, `debounce` or `throttle`, inside the caller's
 * transaction. Race-safe across processes: the key's row in `job_queue_keys` is locked first,
 * so concurrent enqueues of one key run this one at a time, and the unique index on
 * `jobs.job_key` still holds (a new job takes the key over from the old holder).
 */
export async function insertKeyed(tx: SqlExecutor, graph: PreparedGraph, autoIncrementStep = 1): Promise<KeyedOutcome> {
  const job = graph.jobs[0];
  const key = job.key!;
  const mode = job.keyMode as Exclude<typeof job.keyMode, 'forever'>;
  const { windowEndsMs, nowMs } = await lockKey(tx, key);
  const holder = await keyHolder(tx, key);
  const decision = decideKey(mode, holder, windowEndsMs !== null && windowEndsMs > nowMs);
  if (decision.kind === 'existing') return { id: decision.id, created: false };
  const runAfter = mode === 'debounce' ? new Date(nowMs + job.keyWindowMs!) : job.runAfter;
  if (decision.kind === 'debounce' && (await debounceJob(tx, decision.id, job.argsJson, runAfter!))) return { id: decision.id, created: false };
  if (holder) await releaseKey(tx, holder.id);
  if (mode === 'throttle') await setKeyWindow(tx, key, nowMs + job.keyWindowMs!);
  const { ids, readyCount } = await insertGraph(tx, { ...graph, jobs: [{ ...job, runAfter }] }, autoIncrementStep);
  return { id: ids[0], created: readyCount > 0 };
}
