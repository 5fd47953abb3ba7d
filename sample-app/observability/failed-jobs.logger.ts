import { Injectable, Logger } from '@nestjs/common';
import { OnJobEvent, type JobEventDetail, type JobView } from 'nestjs-sql-job-queue';

/**
 * One log line per job that failed for good, from the process that recorded the failure, after
 * the commit. A notification, not a guarantee: a crash between the commit and this line loses
 * the line (the job's state and lastError are in the database either way).
 */
@Injectable()
export class FailedJobsLogger {
  private readonly logger = new Logger('Jobs');

  @OnJobEvent('failed')
  onFailed(job: JobView, detail: JobEventDetail): void {
    this.logger.warn(`job ${job.id} (${job.type}, group ${job.group}) failed for good after ${job.attempts} attempt(s): ${detail.error ?? job.lastError ?? 'no error recorded'}`);
  }
}
