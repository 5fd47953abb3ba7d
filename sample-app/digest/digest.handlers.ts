import { Injectable } from '@nestjs/common';
import { JobHandler, JobQueueService, type RecurringArgs } from 'nestjs-sql-job-queue';

/** The digest's result: what the queue did, as of the slot. */
export interface DigestResult {
  slot: string;
  done: number;
  failed: number;
  ready: number;
}

/**
 * A recurring job: `main.ts` schedules it every 30 s in the demo (`queue.schedule`), and each slot
 * runs once however many replicas of the app run. In an app without a test that counts every job,
 * `@Recurring('*\/30 * * * * *', { name: 'digest' })` on this method does the same declaratively.
 */
@Injectable()
export class DigestHandlers {
  constructor(private readonly queue: JobQueueService) {}

  @JobHandler('digest', { maxAttempts: 2 })
  async digest({ slot }: RecurringArgs): Promise<DigestResult> {
    const { byState } = await this.queue.stats();
    return { slot, done: byState.done, failed: byState.failed, ready: byState.ready };
  }
}
