import { Controller, Get, HttpCode, NotFoundException, Param, Post, Query } from '@nestjs/common';
import { JobQueueService, type JobLogPage } from 'nestjs-sql-job-queue';
import { JobIdPipe } from './job-id.pipe';
import { toJobResponse, type JobResponse } from './job.response';
import { parseJobsQuery, type JobsQuery } from './jobs-query.parser';
import { parseLogsQuery } from './logs-query.parser';

/**
 * Read, cancel and retry single jobs. Unknown ids and wrong states surface as the library's typed
 * errors, which JobQueueErrorsFilter maps to 404 and 409.
 */
@Controller('jobs')
export class JobsController {
  constructor(private readonly queue: JobQueueService) {}

  /** `GET /jobs?state=failed,cancelled&type=render&group=acme&args={"tenant":"acme"}&limit=50&cursor=…`, newest first. */
  @Get()
  async find(@Query() query: JobsQuery): Promise<{ jobs: JobResponse[]; nextCursor: string | null }> {
    const { filter, options } = parseJobsQuery(query);
    const page = await this.queue.find(filter, options);
    return { jobs: page.jobs.map(toJobResponse), nextCursor: page.nextCursor };
  }

  @Get(':id')
  async get(@Param('id', JobIdPipe) id: number): Promise<JobResponse> {
    const job = await this.queue.get(id);
    if (!job) throw new NotFoundException(`Job ${id} does not exist.`);
    return toJobResponse(job);
  }

  /** `GET /jobs/:id/logs?attempt=2&level=error&limit=100&cursor=…`: the lines its handler wrote with `ctx.log()` and its failed attempts' errors, in the order written. */
  @Get(':id/logs')
  async logs(@Param('id', JobIdPipe) id: number, @Query() query: Record<string, unknown>): Promise<JobLogPage> {
    return this.queue.getLogs(id, parseLogsQuery(query));
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
