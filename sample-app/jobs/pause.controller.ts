import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { JobQueueService, type PauseTarget } from 'nestjs-sql-job-queue';

/**
 * Cluster-wide pause of a job type or a tenant (group): `POST /pause {"type":"render"}` or
 * `{"group":"acme"}`. Anything else is the library's InvalidPauseTargetError, answered 400.
 */
@Controller()
export class PauseController {
  constructor(private readonly queue: JobQueueService) {}

  @Post('pause')
  @HttpCode(200)
  async pause(@Body() target: PauseTarget): Promise<{ paused: Array<{ type?: string; group?: string }> }> {
    await this.queue.pause(target);
    return { paused: await this.queue.listPaused() };
  }

  @Post('resume')
  @HttpCode(200)
  async resume(@Body() target: PauseTarget): Promise<{ paused: Array<{ type?: string; group?: string }> }> {
    await this.queue.resume(target);
    return { paused: await this.queue.listPaused() };
  }

  @Get('paused')
  async list(): Promise<{ paused: Array<{ type?: string; group?: string }> }> {
    return { paused: await this.queue.listPaused() };
  }
}
