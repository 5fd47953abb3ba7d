import { Logger, makeWorkerUtils, run, type Runner, type WorkerUtils } from 'graphile-worker';
import pg from 'pg';
import type { BenchDatabase, Probe } from '../databases';
import { ExecutionLog } from '../execution-log';
import type { Subject, SubjectFactory } from '../subject';

/**
 * graphile-worker 0.17.3: LISTEN/NOTIFY wake-up, `add_jobs` batch insert, completed jobs are
 * deleted (so "done" = enqueued − rows left). Two settings: the defaults, and the fastest
 * documented ones (worker.graphile.org/docs/performance: `localQueue: { size: 500 }`,
 * `completeJobBatchDelay: 0`, `failJobBatchDelay: 0`).
 */
export interface GraphileSettings {
  label: string;
  description: string;
  worker: Record<string, unknown>;
}

export const GRAPHILE_DEFAULT: GraphileSettings = {
  label: 'graphile-worker (defaults)',
  description: 'graphile-worker 0.17.3 defaults: concurrency 10, no local queue, no completion batching, pollInterval 2000 ms, LISTEN/NOTIFY',
  worker: {},
};

export const GRAPHILE_FAST: GraphileSettings = {
  label: 'graphile-worker (fast)',
  description:
    'graphile-worker 0.17.3 fastest documented settings: concurrency 10, localQueue { size: 500 }, completeJobBatchDelay 0, failJobBatchDelay 0',
  worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 },
};

/** Errors only: graphile-worker logs every start and stop at info level. */
const quietLogger = new Logger(() => (level, message) => {
  if (level === 'error') console.error(`[graphile-worker] ${message}`);
});

/**
 * A pool we own and end ourselves once the runner has stopped (graphile-worker's own pool could
 * still hold a client when the bench drops the database). Error handlers on the pool and on
 * each client, as graphile-worker asks of a pool passed in. Size 10 = its default maxPoolSize.
 */
export function graphilePool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const log = (err: Error) => console.error(`[graphile-worker pool] ${err.message}`);
  pool.on('error', log);
  pool.on('connect', (client) => client.on('error', log));
  return pool;
}

export async function graphileUtils(pgPool: pg.Pool): Promise<WorkerUtils> {
  const utils = await makeWorkerUtils({ pgPool, logger: quietLogger });
  await utils.migrate();
  return utils;
}

/** `addJobs` in chunks; returns the job ids. */
export async function enqueueGraphile(utils: WorkerUtils, count: number, chunk = 1_000): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += chunk) {
    const specs = Array.from({ length: Math.min(chunk, count - start) }, () => ({ identifier: 'noop', payload: {} }));
    const jobs = await utils.addJobs(specs);
    for (const job of jobs) ids.push(String(job.id));
  }
  return ids;
}

export function startGraphile(pgPool: pg.Pool, settings: GraphileSettings, concurrency = 10): Promise<Runner> {
  return run({
    pgPool,
    concurrency,
    noHandleSignals: true,
    logger: quietLogger,
    taskList: {
      noop: async (payload, helpers) => {
        ExecutionLog.current.record(String(helpers.job.id), (payload as { tag?: number } | null)?.tag);
      },
    },
    parsedCronItems: [],
    preset: { worker: settings.worker },
  });
}

/** Jobs still in the table (completed ones are deleted). */
export const GRAPHILE_OPEN = `SELECT COUNT(*) AS n FROM graphile_worker._private_jobs`;

/** graphile-worker as a Subject: WorkerUtils for enqueues, `run()` for the worker pool. */
export function graphileSubject(settings: GraphileSettings): SubjectFactory {
  return (db: BenchDatabase): Subject => {
    let utils: WorkerUtils | undefined;
    let runner: Runner | undefined;
    let enqueuePool: pg.Pool | undefined;
    let workerPool: pg.Pool | undefined;
    let probe: Probe | undefined;
    let enqueued = 0;
    return {
      label: settings.label,
      async prepare() {
        enqueuePool = graphilePool(db.location);
        utils = await graphileUtils(enqueuePool);
        probe = await db.probe();
      },
      async enqueue(count) {
        const ids = await enqueueGraphile(utils!, count);
        enqueued += ids.length;
        return ids;
      },
      async enqueueOne(tag) {
        const job = await utils!.addJob('noop', { tag });
        enqueued++;
        return String(job.id);
      },
      async startWorker() {
        workerPool = graphilePool(db.location);
        runner = await startGraphile(workerPool, settings);
      },
      open: () => probe!.scalar(GRAPHILE_OPEN),
      async finalization() {
        const left = await probe!.scalar(GRAPHILE_OPEN);
        return { finalized: enqueued - left, notFinalized: left };
      },
      executions: async () => ExecutionLog.current.snapshot(),
      allStarted: (expected) => ExecutionLog.current.distinct >= expected,
      async close() {
        await runner?.stop();
        await utils?.release();
        await workerPool?.end();
        await enqueuePool?.end();
      },
    };
  };
}
