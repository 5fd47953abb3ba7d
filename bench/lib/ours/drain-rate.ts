import type { Probe } from '../databases';
import { ExecutionLog } from '../execution-log';
import { drainTimeout, waitUntilDrained } from '../wait';

/**
 * Jobs/s of a worker draining `jobs` no-op jobs, from its first handler start to the database
 * showing every job done; throws unless each job ran exactly once. Call ExecutionLog.reset()
 * before the worker starts.
 */
export async function drainRate(probe: Probe, jobs: number, what: string): Promise<number> {
  const end = await waitUntilDrained({
    remaining: async () => jobs - (await probe.scalar(`SELECT COUNT(*) FROM jobs WHERE state = 'done'`)),
    total: jobs,
    timeoutMs: drainTimeout(jobs),
    what,
  });
  const log = ExecutionLog.current;
  if (log.distinct !== jobs || log.total !== jobs) throw new Error(`${log.distinct} distinct of ${jobs} jobs ran, ${log.total} runs in all`);
  return jobs / ((end - log.firstStartAt!) / 1000);
}
