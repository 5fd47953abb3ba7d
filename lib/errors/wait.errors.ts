import { JobQueueError } from './job-queue.error';

/**
 * `waitFor` was still pending when the application shut down (`app.close()`), or was called
 * after it. The job itself is unaffected: it keeps its state and may still run elsewhere.
 */
export class WaitForShutdownError extends JobQueueError {
  readonly code = 'WAIT_FOR_SHUTDOWN';

  constructor(
    readonly id: number,
    readonly lastState: string | null,
  ) {
    super(
      `Stopped waiting for job ${id}: the application is shutting down (app.close())` +
        (lastState ? `; the job was last seen ${lastState}` : '') +
        `. The job itself is unaffected; read it with get() or wait for it from a running application.`,
    );
  }
}
