import { Inject, Injectable, Logger } from '@nestjs/common';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import { ShutdownDeadline } from './shutdown-deadline';

/**
 * The shutdown's one deadline, shared by every provider whose shutdown hook waits for the
 * database: Nest runs those hooks one after another, so a deadline each would add up.
 */
@Injectable()
export class ShutdownClock {
  private readonly logger = new Logger('JobQueue');
  private current: ShutdownDeadline | undefined;
  private readonly passed: Array<() => void> = [];

  constructor(@Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions) {}

  /** Started by the first hook that asks. */
  deadline(): ShutdownDeadline {
    this.current ??= new ShutdownDeadline(this.options.shutdownGraceMs, (what) => {
      this.logger.warn(`shutdown: the database did not answer in time (waiting for ${what}); closing its connections, unwritten results are given up and their jobs will run again`);
      for (const f of this.passed) f();
    });
    return this.current;
  }

  /** Runs `f` once the deadline has passed. */
  whenPassed(f: () => void): void {
    this.passed.push(f);
  }
}
