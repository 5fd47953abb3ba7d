import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { JobContext, JobHandler, JobQueueModule, OnJobEvent, type JobEventDetail, type JobQueueModuleOptions, type JobView } from '../../lib';
import { setTimeout as sleep } from 'node:timers/promises';
import { bootContext, runWorker, send, workerOptions } from './worker-harness';

/** Handlers of events.spec: one that completes, one that fails once, one that always fails. */
@Injectable()
class EventHandlers {
  @JobHandler('ev-ok')
  async ok(_args: unknown, ctx: JobContext): Promise<{ pid: number }> {
    await ctx.progress(50, 'half');
    // Holds its slot a while: 13 of these take one worker of 4 slots ≥ 800 ms, many times the
    // other worker's 50 ms poll, so the spec can require that both workers ran some.
    await sleep(200);
    return { pid: process.pid };
  }

  @JobHandler('ev-flaky', { maxAttempts: 3 })
  async flaky(_args: unknown, ctx: JobContext): Promise<void> {
    if (ctx.attempt === 1) throw new Error('first attempt fails');
  }

  @JobHandler('ev-bad', { maxAttempts: 2 })
  async bad(): Promise<void> {
    throw new Error('always fails');
  }
}

/** Records every event it hears on stdout, with this process's pid; one listener always throws. */
@Injectable()
class EventRecorder {
  private record(job: JobView, d: JobEventDetail): void {
    send({ type: 'event', pid: process.pid, event: d.event, id: job.id, attempt: d.attempt ?? null, error: d.error ?? null, t: performance.timeOrigin + performance.now() });
  }

  @OnJobEvent('enqueued') enqueued(job: JobView, d: JobEventDetail) { this.record(job, d); }
  @OnJobEvent('started') started(job: JobView, d: JobEventDetail) { this.record(job, d); }
  @OnJobEvent('progress') progress(job: JobView, d: JobEventDetail) { this.record(job, d); }
  @OnJobEvent('completed') completed(job: JobView, d: JobEventDetail) { this.record(job, d); }
  @OnJobEvent('retrying') retrying(job: JobView, d: JobEventDetail) { this.record(job, d); }
  @OnJobEvent('failed') failed(job: JobView, d: JobEventDetail) { this.record(job, d); }
  @OnJobEvent('cancelled') cancelled(job: JobView, d: JobEventDetail) { this.record(job, d); }

  @OnJobEvent('completed')
  async explode(): Promise<void> {
    throw new Error('listener failure that must change nothing');
  }
}

@Module({})
class EventsWorkerModule {
  static with(options: JobQueueModuleOptions): DynamicModule {
    return { module: EventsWorkerModule, imports: [JobQueueModule.forRoot(options)], providers: [EventHandlers, EventRecorder] };
  }
}

runWorker(async () => {
  const app = await bootContext(EventsWorkerModule.with(workerOptions<JobQueueModuleOptions>()));
  app.enableShutdownHooks(['SIGTERM']);
  send({ type: 'ready', pid: process.pid });
});
