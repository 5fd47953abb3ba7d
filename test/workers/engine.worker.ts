import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { JOB_QUEUE_DATA_SOURCE, JobContext, JobHandler, JobQueueModule, UnrecoverableJobError, type JobQueueModuleOptions } from '../../lib';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import { sql } from '../../lib/database/sql';
import { bootContext, runWorker, send, workerOptions } from './worker-harness';

const WORKER = `${process.pid}`;

/**
 * Handlers of the multi-process specs. They write what they see to the test's probe tables
 * (executions, cap_probe) through the queue's own database handle.
 */
@Injectable()
class ProbeHandlers {
  constructor(private readonly db: JobQueueDatabase) {}

  /** Runs `firstAttemptMs` on attempt 1 (long enough to be killed), `ms` afterwards. */
  @JobHandler('crashy')
  async crashy(args: { firstAttemptMs: number; ms: number }, ctx: JobContext): Promise<{ worker: string }> {
    await this.record(ctx);
    await sleep(ctx.attempt === 1 ? args.firstAttemptMs : args.ms, ctx.signal);
    await this.db.run(sql`UPDATE executions SET finished = 1 WHERE job_id = ${ctx.id} AND worker = ${WORKER}`);
    return { worker: WORKER };
  }

  /**
   * Attempt 1 blocks the event loop (a wedged worker) until the test creates `releaseFile`;
   * later attempts return at once.
   */
  @JobHandler('wedge')
  async wedge(args: { releaseFile: string; maxBlockMs: number }, ctx: JobContext): Promise<{ worker: string }> {
    await this.record(ctx);
    if (ctx.attempt === 1) {
      send({ type: 'wedging', id: ctx.id });
      const until = Date.now() + args.maxBlockMs;
      while (!existsSync(args.releaseFile) && Date.now() < until) {
        /* a handler that never yields: no timers, no heartbeats */
      }
      send({ type: 'unwedged', id: ctx.id });
    }
    return { worker: WORKER };
  }

  /** Counts jobs running at once, cluster-wide and in its group, and keeps the maxima. */
  @JobHandler('counted')
  async counted(args: { ms: number }, ctx: JobContext): Promise<void> {
    await this.record(ctx);
    const probes = ['global', `group:${ctx.group}`];
    for (const name of probes) {
      // max_seen first: MySQL evaluates SET left to right with the new values.
      await this.db.run(sql`UPDATE cap_probe SET max_seen = CASE WHEN current + 1 > max_seen THEN current + 1 ELSE max_seen END,
        current = current + 1 WHERE name = ${name}`);
    }
    await sleep(args.ms, ctx.signal);
    for (const name of probes) await this.db.run(sql`UPDATE cap_probe SET current = current - 1 WHERE name = ${name}`);
  }

  @JobHandler('slow')
  async slow(args: { ms: number }, ctx: JobContext): Promise<string> {
    await this.record(ctx);
    await sleep(args.ms, ctx.signal);
    if (ctx.signal.aborted) throw ctx.signal.reason;
    return 'slow done';
  }

  /** The chaos workload: some work, planned transient or permanent failures. */
  @JobHandler('chaos', { maxAttempts: 25 })
  async chaos(args: { ms: number; fail?: 'once' | 'always' }, ctx: JobContext): Promise<{ id: number; attempt: number }> {
    await this.record(ctx);
    await sleep(args.ms, ctx.signal);
    if (args.fail === 'always') throw new UnrecoverableJobError('planned permanent failure');
    if (args.fail === 'once' && ctx.attempt === 1) throw new Error('planned transient failure');
    return { id: ctx.id, attempt: ctx.attempt };
  }

  /**
   * Snoozes (for `ms`, jittered) until the job's stored `snoozes` reaches `times`, then returns:
   * the count in the database decides, so a run repeated after a crash snoozes no extra time.
   */
  @JobHandler('snoozy', { maxAttempts: 5 })
  async snoozy(args: { times: number; ms: number }, ctx: JobContext): Promise<{ worker: string }> {
    await this.record(ctx);
    const { rows } = await this.db.run(sql`SELECT snoozes FROM jobs WHERE id = ${ctx.id}`);
    if (Number(rows[0].snoozes) < args.times) ctx.snooze(Math.random() * args.ms);
    return { worker: WORKER };
  }

  @JobHandler('noop')
  async noop(): Promise<null> {
    return null;
  }

  private async record(ctx: JobContext): Promise<void> {
    await this.db.run(sql`INSERT INTO executions (job_id, worker, attempt) VALUES (${ctx.id}, ${WORKER}, ${ctx.attempt})`);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
}

@Module({})
class WorkerModule {
  static with(options: JobQueueModuleOptions): DynamicModule {
    return { module: WorkerModule, imports: [JobQueueModule.forRoot(options)], providers: [ProbeHandlers] };
  }
}

runWorker(async () => {
  const { reportMemoryMs, ...options } = workerOptions<JobQueueModuleOptions & { reportMemoryMs?: number }>();
  const app = await bootContext(WorkerModule.with(options));
  app.enableShutdownHooks(['SIGTERM']);
  send({ type: 'ready', pid: process.pid });
  if (reportMemoryMs) {
    const dataSource = app.get<DataSource>(JOB_QUEUE_DATA_SOURCE);
    const usage = () => ({ rss: process.memoryUsage().rss, heap: process.memoryUsage().heapUsed, pool: poolSize(dataSource) });
    // Cheap samples on a timer (no GC: a forced full GC every 100 ms made the run itself 3-6x
    // slower on every dialect); the heap after a full GC, the leak signal, when the parent asks
    // (`gc` on stdin, at a few points of the run; needs --expose-gc).
    setInterval(() => send({ type: 'memory', ...usage() }), reportMemoryMs);
    const gc = (globalThis as { gc?: () => void }).gc;
    createInterface({ input: process.stdin }).on('line', (line) => {
      if (line.trim() !== 'gc') return;
      gc?.();
      send({ type: 'memory-gc', ...usage() });
    });
  }
});

/** Open connections of the DataSource's pool (pg Pool, mysql2 pool; SQLite has one). */
function poolSize(dataSource: DataSource): number {
  const driver = dataSource.driver as unknown as { master?: { totalCount: number }; pool?: { _allConnections?: { length: number } } };
  return driver.master?.totalCount ?? driver.pool?._allConnections?.length ?? 1;
}
