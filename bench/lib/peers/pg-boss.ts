import { randomUUID } from 'node:crypto';
import PgBoss from 'pg-boss';
import type { BenchDatabase, Probe } from '../databases';
import { ExecutionLog } from '../execution-log';
import type { Subject, SubjectFactory } from '../subject';

/**
 * pg-boss 10.4.2. It has no LISTEN/NOTIFY wake-up: every `work()` call starts one polling loop
 * that fetches up to `batchSize` jobs, runs the handler on the batch, completes the batch
 * (without awaiting the completion), then sleeps until `pollingIntervalSeconds` has passed since
 * the fetch. Throughput is therefore bounded by loops × batchSize ÷ interval.
 *
 * Settings chosen (the pg-boss 10 docs: one work() per parallel worker, batchSize for volume):
 * 10 work() loops (our concurrency 10), batchSize 50 (the top of the 10–50 range: 10 × 50 =
 * 500 jobs fetched per round, the same prefetch as graphile-worker's localQueue size 500),
 * pollingIntervalSeconds 0.5 (the minimum pg-boss accepts; the 2 s default would cap the
 * ceiling at 250 jobs/s). The handler runs its batch one job at a time, so at most 10 handlers
 * run at once, as for the other systems.
 */
export const PGBOSS_SETTINGS = { workers: 10, batchSize: 50, pollingIntervalSeconds: 0.5 };
export const PGBOSS_DESCRIPTION =
  'pg-boss 10.4.2: 10 work() loops × batchSize 50, pollingIntervalSeconds 0.5 (minimum), other options default; polls, no LISTEN/NOTIFY';
const QUEUE = 'noop';

export async function startBoss(url: string): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: url });
  boss.on('error', (err: Error) => console.error(`[pg-boss] ${err.message}`));
  await boss.start();
  await boss.createQueue(QUEUE);
  return boss;
}

/** `insert` in chunks with client-side ids; returns them. */
export async function enqueueBoss(boss: PgBoss, count: number, chunk = 1_000): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += chunk) {
    const jobs = Array.from({ length: Math.min(chunk, count - start) }, () => ({ id: randomUUID(), name: QUEUE, data: {} }));
    await boss.insert(jobs);
    for (const job of jobs) ids.push(job.id);
  }
  return ids;
}

export async function workBoss(boss: PgBoss): Promise<void> {
  const { workers, batchSize, pollingIntervalSeconds } = PGBOSS_SETTINGS;
  for (let i = 0; i < workers; i++) {
    await boss.work<{ tag?: number }>(QUEUE, { batchSize, pollingIntervalSeconds }, async (jobs) => {
      for (const job of jobs) ExecutionLog.current.record(job.id, job.data?.tag);
    });
  }
}

export async function stopBoss(boss: PgBoss): Promise<void> {
  await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
}

export const PGBOSS_OPEN = `SELECT COUNT(*) AS n FROM pgboss.job WHERE name = '${QUEUE}' AND state IN ('created', 'retry', 'active')`;
/** Completed rows, in the live table and (if maintenance moved them) the archive. */
export const PGBOSS_COMPLETED = `SELECT (SELECT COUNT(*) FROM pgboss.job WHERE name = '${QUEUE}' AND state = 'completed')
  + (SELECT COUNT(*) FROM pgboss.archive WHERE name = '${QUEUE}' AND state = 'completed') AS n`;
export const PGBOSS_NOT_COMPLETED = `SELECT (SELECT COUNT(*) FROM pgboss.job WHERE name = '${QUEUE}' AND state <> 'completed')
  + (SELECT COUNT(*) FROM pgboss.archive WHERE name = '${QUEUE}' AND state <> 'completed') AS n`;

/** pg-boss as a Subject: one PgBoss instance enqueues (insert / send) and runs the work() loops. */
export function bossSubject(): SubjectFactory {
  return (db: BenchDatabase): Subject => {
    let boss: PgBoss | undefined;
    let probe: Probe | undefined;
    return {
      label: 'pg-boss',
      async prepare() {
        boss = await startBoss(db.location);
        probe = await db.probe();
      },
      enqueue: (count) => enqueueBoss(boss!, count),
      async enqueueOne(tag) {
        const id = await boss!.send(QUEUE, { tag });
        return String(id);
      },
      startWorker: () => workBoss(boss!),
      open: () => probe!.scalar(PGBOSS_OPEN),
      async finalization() {
        return { finalized: await probe!.scalar(PGBOSS_COMPLETED), notFinalized: await probe!.scalar(PGBOSS_NOT_COMPLETED) };
      },
      executions: async () => ExecutionLog.current.snapshot(),
      allStarted: (expected) => ExecutionLog.current.distinct >= expected,
      close: async () => boss && stopBoss(boss),
    };
  };
}
