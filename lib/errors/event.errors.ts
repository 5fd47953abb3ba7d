import { JobQueueError } from './job-queue.error';

/** `@OnJobEvent` names an event that does not exist, or sits on a provider it cannot listen from. */
export class InvalidJobEventListenerError extends JobQueueError {
  readonly code = 'INVALID_JOB_EVENT_LISTENER';
  constructor(
    readonly where: string,
    detail: string,
  ) {
    super(`@OnJobEvent on ${where}: ${detail}`);
  }
}

/** `events: { emitter: true }` but no EventEmitter2 can be found (install @nestjs/event-emitter and import EventEmitterModule.forRoot()). */
export class JobEventEmitterMissingError extends JobQueueError {
  readonly code = 'JOB_EVENT_EMITTER_MISSING';
  constructor(reason: string) {
    super(
      `JobQueueModule option events.emitter is true, but ${reason}. Install @nestjs/event-emitter and import ` +
        'EventEmitterModule.forRoot() in your app module, or drop the option.',
    );
  }
}
