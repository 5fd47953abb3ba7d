import { Controller, Get } from '@nestjs/common';
import { JobQueueService, type QueueStats } from 'nestjs-sql-job-queue';

@Controller('stats')
export class StatsController {
  constructor(private readonly queue: JobQueueService) {}

  /** The queue as a whole: counts per state and group, oldest ready age, recent failure rate. */
  @Get()
  stats(): Promise<QueueStats> {
    return this.queue.stats();
  }
}
