import type { DynamicModule } from '@nestjs/common';
import type { JobQueueModuleOptions } from 'nestjs-sql-job-queue';
import { ChildWorker } from '../child-worker';
import type { BenchDatabase, Probe } from '../databases';
import { ExecutionLog, mergeSnapshots, type ExecutionSnapshot } from '../execution-log';
import type { Subject, SubjectFactory } from '../subject';
import { bootEnqueuer, bootOurs, enqueueNoops, ourOptions, type Observe, type OurApp } from './our-app';
import { OurRows } from './our-rows';

export interface OurSubjectOptions {
  label: string;
  /** Worker module options on top of OUR_WORKER_DEFAULTS (concurrency 10, poll 1000 ms). */
  worker?: Partial<JobQueueModuleOptions>;
  /** 0: the worker runs in this process; n ≥ 1: n worker processes (bench/workers/our-worker). */
  processes?: number;
  /** Single-job enqueues go through the worker's own app (an in-process wake) instead of a separate enqueue-only app. */
  enqueueViaWorker?: boolean;
  /**
   * Tracing on, in this process only (processes 0): JobQueueTracingModule in both apps and a real
   * SDK (see tracing-sdk.ts) installed for the run. Loaded only when asked, so the plain runs
   * never import @opentelemetry. `sdk-only`: the SDK installed, the tracing module not imported
   * (what an app that traces other things pays without tracing its jobs). `sdk-active`: the same,
   * with the context manager's AsyncLocalStorage once run (as the app's first traced request
   * would): on Node 20 its async hook then taxes every promise of the process.
   */
  tracing?: boolean | 'sdk-only' | 'sdk-active';
  /** With `tracing`: head sampling ratio of the SDK (default 1, every trace recorded). */
  tracingSampleRatio?: number;
  /** Observability on in the in-process apps (see Observe in our-app). */
  observe?: Observe;
}

async function loadTracing(sampleRatio?: number, mode: OurSubjectOptions['tracing'] = true): Promise<{ modules: DynamicModule[]; uninstall(): Promise<void> }> {
  const [{ JobQueueTracingModule }, { installBenchTracing }] = await Promise.all([import('nestjs-sql-job-queue/tracing'), import('./tracing-sdk')]);
  const sdk = installBenchTracing(sampleRatio);
  if (mode === 'sdk-active') {
    const { context, ROOT_CONTEXT } = await import('@opentelemetry/api');
    context.with(ROOT_CONTEXT, () => undefined);
  }
  return { modules: mode === true ? [JobQueueTracingModule.forRoot()] : [], uninstall: () => sdk.uninstall() };
}

/**
 * This library as a Subject: an enqueue-only Nest app (`worker: false`) for enqueues, and a worker
 * app with the no-op handler, in this process or in child processes.
 */
export function ourSubject(o: OurSubjectOptions): SubjectFactory {
  return (db: BenchDatabase): Subject => {
    let enqueuer: OurApp | undefined;
    let worker: OurApp | undefined;
    let children: ChildWorker[] = [];
    let probe: Probe | undefined;
    let tracing: { modules: DynamicModule[]; uninstall(): Promise<void> } | undefined;
    let rows: OurRows | undefined;
    let lo = Infinity;
    let hi = -Infinity;
    const note = (ids: number[]) => ids.forEach((id) => ((lo = Math.min(lo, id)), (hi = Math.max(hi, id))));
    const moduleOptions = () => ourOptions(db.dialect, db.location, o.worker);

    return {
      label: o.label,
      async prepare() {
        if (o.tracing) tracing = await loadTracing(o.tracingSampleRatio, o.tracing);
        enqueuer = await bootEnqueuer(db.dialect, db.location, tracing?.modules, o.observe); // runs the migrations
        probe = await db.probe();
        rows = new OurRows(probe, db.dialect);
      },
      async enqueue(count) {
        const ids = await enqueueNoops(enqueuer!.queue, count);
        note(ids);
        return ids;
      },
      async enqueueOne(tag) {
        const app = o.enqueueViaWorker ? worker! : enqueuer!;
        const job = await app.queue.enqueue({ type: 'noop', args: { tag } });
        note([job.id]);
        return job.id;
      },
      async startWorker() {
        const processes = o.processes ?? 0;
        if (processes === 0) {
          worker = await bootOurs(moduleOptions(), true, tracing?.modules, o.observe);
          return;
        }
        children = (await Promise.all(Array.from({ length: processes }, () => ChildWorker.start('our-worker', { module: moduleOptions() })))).map(
          (c) => c.worker,
        );
      },
      open: () => rows!.open([lo, hi]),
      finalization: () => rows!.finalization([lo, hi]),
      async executions(): Promise<ExecutionSnapshot> {
        if (!children.length) return ExecutionLog.current.snapshot();
        const reports = await Promise.all(children.map((c) => c.request({ type: 'report' }, 'report')));
        return mergeSnapshots(reports.map((r) => r.snapshot as ExecutionSnapshot));
      },
      allStarted: (o.processes ?? 0) === 0 ? (expected) => ExecutionLog.current.distinct >= expected : undefined,
      async close() {
        await Promise.all(children.map((c) => c.stop()));
        await worker?.close();
        await enqueuer?.close();
        await tracing?.uninstall();
      },
    };
  };
}
