import { Logger } from '@nestjs/common';
import type { JobEventDetail, JobEventListener, JobEventName } from './job-event.types';
import type { JobSignal, JobSignalSink } from './job-signal';

export interface NamedListener {
  /** `Class.method`, for the log line when it throws. */
  name: string;
  call: JobEventListener;
}

/** The part of EventEmitter2 the forwarding uses (so the core does not import @nestjs/event-emitter). */
export interface EventEmitterLike {
  emit(event: string, ...values: unknown[]): boolean;
}

/**
 * Calls the `@OnJobEvent` listeners (and, opted in, EventEmitter2 as `job-queue.<event>`) with
 * each job view and its detail, in report order. A listener that throws or rejects is logged;
 * nothing it does reaches the queue. Async listeners are not awaited: a slow one delays nobody.
 */
export class JobEventDispatcher implements JobSignalSink {
  private readonly logger = new Logger('JobQueue');
  emitter: EventEmitterLike | undefined;

  constructor(private readonly listeners: ReadonlyMap<JobEventName, readonly NamedListener[]>) {}

  needsView(event: JobEventName): boolean {
    return this.listeners.has(event) || this.emitter !== undefined;
  }

  needsType(): boolean {
    return false;
  }

  deliver(signals: readonly JobSignal[]): void {
    for (const signal of signals) {
      const job = signal.view;
      if (!job) continue; // deleted before it could be read, or the read failed (logged)
      const listeners = this.listeners.get(signal.event);
      if (!listeners && !this.emitter) continue;
      const detail = toDetail(signal);
      if (listeners) for (const listener of listeners) this.call(listener, job, detail);
      if (this.emitter) this.forward(job, detail);
    }
  }

  private call(listener: NamedListener, job: NonNullable<JobSignal['view']>, detail: JobEventDetail): void {
    try {
      const result = listener.call(job, detail);
      if (result && typeof (result as Promise<unknown>).then === 'function') {
        (result as Promise<unknown>).then(undefined, (err: unknown) => this.failed(listener.name, detail, job.id, err));
      }
    } catch (err) {
      this.failed(listener.name, detail, job.id, err);
    }
  }

  private forward(job: NonNullable<JobSignal['view']>, detail: JobEventDetail): void {
    try {
      this.emitter!.emit(`job-queue.${detail.event}`, job, detail);
    } catch (err) {
      this.failed('EventEmitter2', detail, job.id, err);
    }
  }

  private failed(name: string, detail: JobEventDetail, id: number, err: unknown): void {
    const stack = err instanceof Error ? err.stack : undefined;
    this.logger.error(`@OnJobEvent('${detail.event}') listener ${name} threw for job ${id}: ${thrownText(err)}`, stack);
  }
}

/**
 * What a listener threw, as text, whatever it was. Never throws: String() of a null-prototype
 * object did, in the catch (the rest of the batch went undelivered) and in the rejection handler
 * (an unhandled rejection, which ends the process by Node's default).
 */
function thrownText(err: unknown): string {
  try {
    const message = (err as { message?: unknown } | null | undefined)?.message;
    return typeof message === 'string' ? message : String(err);
  } catch {
    return Object.prototype.toString.call(err);
  }
}

function toDetail(s: JobSignal): JobEventDetail {
  const detail: JobEventDetail = { event: s.event, at: new Date(s.at) };
  const error = s.error ?? (s.event === 'retrying' || s.event === 'failed' ? (s.view?.lastError ?? undefined) : undefined);
  if (error !== undefined) detail.error = error;
  if (s.attempt !== undefined) detail.attempt = s.attempt;
  if (s.durationMs !== undefined) detail.durationMs = s.durationMs;
  if (s.delayMs !== undefined) detail.delayMs = s.delayMs;
  if (s.percent !== undefined) {
    detail.percent = s.percent;
    detail.stage = s.stage ?? null;
  }
  return detail;
}
