import { Controller, Get, HttpCode, NotFoundException, Param, Post } from '@nestjs/common';
import { JobQueueService } from 'nestjs-sql-job-queue';
import { JobIdPipe } from './job-id.pipe';
import { toJobResponse, type JobResponse } from './job.response';

/**
 * Read, cancel and retry single jobs. Unknown ids and wrong states surface as the library's typed
 * errors, which JobQueueErrorsFilter maps to 404 and 409.
 */
@Controller('jobs')
export class JobsController {
  constructor(private readonly queue: JobQueueService) {}

  @Get(':id')
  async get(@Param('id', JobIdPipe) id: number): Promise<JobResponse> {
    const job = await this.queue.get(id);
    if (!job) throw new NotFoundException(`Job ${id} does not exist.`);
    return toJobResponse(job);
  }

  /** Cancels the job (a container: its unfinished subtree) and its dependents; a finished job is returned as is. */
  @Post(':id/cancel')
  @HttpCode(200)
  async cancel(@Param('id', JobIdPipe) id: number): Promise<JobResponse> {
    return toJobResponse(await this.queue.cancel(id));
  }

  /** Runs a failed or cancelled job again, with what its failure closed; 409 for any other state. */
  @Post(':id/retry')
  @HttpCode(200)
  async retry(@Param('id', JobIdPipe) id: number): Promise<JobResponse> {
    return toJobResponse(await this.queue.retry(id));
  }
}
