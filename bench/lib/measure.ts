import { setTimeout as sleep } from 'node:timers/promises';
import type { Dialect } from 'nestjs-sql-job-queue';
import { checkRun, type Verdict } from './correctness';
import { CpuMeter, type CpuUse } from './cpu-meter';
import { startCpuProfile } from './cpu-profile';
import { withDatabase } from './databases';
import { ExecutionLog, wallNow } from './execution-log';
import { percentile } from './stats';
import type { SubjectFactory } from './subject';
import { drainTimeout, waitUntilDrained } from './wait';

export interface ThroughputRun {
  jobs: number;
  enqueueMs: number;
  /** First handler start → every job finalized in the database. */
  processMs: number;
  /** CPU from the worker's start to the last job finalized (the processing phase). */
  cpu: CpuUse;
  verdict: Verdict;
}

/**
 * Enqueue-then-process on a fresh database: time the batch enqueue of `jobs` no-op jobs (no
 * worker running), then start the worker and time from its first handler start until the
 * database shows every job finalized. Checks correctness before returning.
 */
export async function measureThroughput(dialect: Dialect, factory: SubjectFactory, jobs: number): Promise<ThroughputRun> {
  return withDatabase(dialect, async (db) => {
    const subject = factory(db);
    try {
      await subject.prepare();
      const t0 = wallNow();
      const ids = await subject.enqueue(jobs);
      const enqueueMs = wallNow() - t0;
      ExecutionLog.reset();
      const meter = await CpuMeter.start(dialect, db.name);
      const profile = await startCpuProfile(); // BENCH_CPU_PROF=dir: the processing phase's profile
      let end: number;
      let workerCpu0: number | undefined;
      try {
        workerCpu0 = await subject.workerCpuUs?.();
        await subject.startWorker();
        end = await waitUntilDrained({
          remaining: () => subject.open(),
          total: jobs,
          timeoutMs: drainTimeout(jobs),
          ready: subject.allStarted ? () => subject.allStarted!(jobs) : undefined,
          what: subject.label,
        });
      } catch (err) {
        await meter.stop(); // or its sampler process outlives the bench
        await profile?.stop(`${subject.label}-failed`);
        throw err;
      }
      const cpu = await meter.stop();
      await profile?.stop(subject.label);
      if (workerCpu0 !== undefined) cpu.workerUs = (await subject.workerCpuUs!()) - workerCpu0;
      const executions = await subject.executions();
      const verdict = checkRun({ expectedIds: ids, executions, ...(await subject.finalization()) });
      return { jobs, enqueueMs, processMs: end - (executions.firstStartAt ?? end), cpu, verdict };
    } finally {
      await subject.close();
    }
  });
}

export interface LatencyRun {
  samples: number[];
  p50: number;
  p95: number;
  max: number;
  verdict: Verdict;
}

/**
 * An idle worker; `samples` sequential single-job enqueues, each after a random pause of
 * 0–`maxGapMs` (so polling systems are sampled at random phases); latency = wall time from just
 * before the enqueue call to the handler's start. Five unrecorded warm-up jobs go first.
 */
export async function measureLatency(
  dialect: Dialect,
  factory: SubjectFactory,
  samples: number,
  maxGapMs = 50,
  perJobTimeoutMs = 30_000,
): Promise<LatencyRun> {
  return withDatabase(dialect, async (db) => {
    const subject = factory(db);
    try {
      await subject.prepare();
      ExecutionLog.reset();
      await subject.startWorker();
      await sleep(300); // let the worker settle into idle
      const ids: Array<string | number> = [];
      const latencies: number[] = [];
      const warmUp = 5;
      for (let tag = 0; tag < warmUp + samples; tag++) {
        await sleep(Math.random() * maxGapMs);
        const t0 = wallNow();
        const started = ExecutionLog.current.waitForTag(tag, perJobTimeoutMs);
        started.catch(() => undefined); // awaited below; never an unhandled rejection if the enqueue throws
        ids.push(await subject.enqueueOne(tag));
        const at = await started;
        if (tag >= warmUp) latencies.push(at - t0);
      }
      await waitUntilDrained({ remaining: () => subject.open(), total: ids.length, timeoutMs: drainTimeout(ids.length), what: subject.label });
      const verdict = checkRun({ expectedIds: ids, executions: await subject.executions(), ...(await subject.finalization()) });
      return { samples: latencies, p50: percentile(latencies, 50), p95: percentile(latencies, 95), max: Math.max(...latencies), verdict };
    } finally {
      await subject.close();
    }
  });
}
