import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { JobQueueHealthIndicator } from './job-queue.health';

/** Import next to JobQueueModule, then inject JobQueueHealthIndicator into your terminus health controller. */
@Module({
  imports: [TerminusModule],
  providers: [JobQueueHealthIndicator],
  exports: [JobQueueHealthIndicator],
})
export class JobQueueHealthModule {}
