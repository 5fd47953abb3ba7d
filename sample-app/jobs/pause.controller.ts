import { BadRequestException, Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { JobQueueService, type FindOptions, type FindPausedResult, type PauseTarget, type PausedFilter } from 'nestjs-sql-job-queue';

/**
 * Cluster-wide pause of a job type or a tenant (group): `POST /pause {"type":"render"}` or
 * `{"group":"acme"}`. Anything else is the library's InvalidPauseTargetError, answered 400.
 * `GET /paused?kind=group&limit=50&cursor=…` pages what is paused; pause and resume answer with
 * the first page. Bad paging input is the library's InvalidQueryError, answered 400.
 */
@Controller()
export class PauseController {
  constructor(private readonly queue: JobQueueService) {}

  @Post('pause')
  @HttpCode(200)
  async pause(@Body() target: PauseTarget): Promise<FindPausedResult> {
    await this.queue.pause(target);
    return this.queue.findPaused();
  }

  @Post('resume')
  @HttpCode(200)
  async resume(@Body() target: PauseTarget): Promise<FindPausedResult> {
    await this.queue.resume(target);
    return this.queue.findPaused();
  }

  @Get('paused')
  list(@Query() query: Record<string, string>): Promise<FindPausedResult> {
    const unknown = Object.keys(query).find((k) => !['kind', 'limit', 'cursor'].includes(k));
    if (unknown) throw new BadRequestException(`unknown query parameter "${unknown}"; use kind, limit, cursor`);
    const filter: PausedFilter = query.kind === undefined ? {} : { kind: query.kind as PausedFilter['kind'] };
    const options: FindOptions = {};
    if (query.cursor !== undefined) options.cursor = query.cursor;
    if (query.limit !== undefined) {
      if (!/^\d+$/.test(query.limit)) throw new BadRequestException('"limit" must be a whole number from 1 to 500.');
      options.limit = Number(query.limit);
    }
    return this.queue.findPaused(filter, options);
  }
}
