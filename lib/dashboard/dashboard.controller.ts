import { Body, Controller, Get, HttpCode, Inject, NotFoundException, Param, Post, Query, Req, Res, UseFilters, UseGuards, type Type } from '@nestjs/common';
import { JobNotFoundError } from '../errors/job.errors';
import { JobQueueService } from '../job-queue.service';
import { DASHBOARD_CSRF_TOKEN, DASHBOARD_OPTIONS } from './dashboard.constants';
import { DashboardActionGuard } from './dashboard-action.guard';
import { loadAssets } from './dashboard-assets';
import { DashboardAuthGuard } from './dashboard-auth.guard';
import { DashboardErrorsFilter } from './dashboard-errors.filter';
import { setHeader, type HttpRequestLike } from './dashboard-http';
import type { ResolvedDashboardOptions } from './dashboard.options';
import { dashboardPage, requestBase } from './dashboard-page';
import { parseRescheduleBody, positiveInt } from './dashboard-query';
import { DashboardService } from './dashboard.service';

/**
 * The dashboard's routes under `path` (and the app's global prefix): the page, its two assets,
 * JSON reads, and POST actions. A class per path, because Nest reads the path from the decorator.
 */
export function createDashboardController(path: string): Type<unknown> {
  @Controller(path)
  @UseGuards(DashboardAuthGuard)
  @UseFilters(DashboardErrorsFilter)
  class JobQueueDashboardController {
    // Read on first use: an app whose tests never open the page needs no built bundle.
    private assets: ReturnType<typeof loadAssets> | null = null;

    constructor(
      @Inject(DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
      @Inject(DASHBOARD_CSRF_TOKEN) private readonly csrfToken: string,
      private readonly dashboard: DashboardService,
      private readonly queue: JobQueueService,
    ) {}

    @Get()
    page(@Req() req: HttpRequestLike, @Res({ passthrough: true }) res: unknown): string {
      setHeader(res, 'Content-Type', 'text/html; charset=utf-8');
      return dashboardPage(requestBase(req.originalUrl ?? req.url), this.csrfToken, this.options.readOnly);
    }

    @Get('assets/:file')
    asset(@Param('file') file: string, @Res({ passthrough: true }) res: unknown): string {
      const asset = (this.assets ??= loadAssets()).get(file);
      if (!asset) throw new NotFoundException();
      setHeader(res, 'Content-Type', asset.type);
      return asset.body;
    }

    @Get('api/overview')
    overview() {
      return this.dashboard.overview();
    }

    @Get('api/jobs')
    jobs(@Query() query: Record<string, unknown>) {
      return this.dashboard.jobs(query);
    }

    @Get('api/jobs/:id')
    async job(@Param('id') id: string) {
      const n = positiveInt(id, 'id');
      const job = await this.dashboard.job(n);
      if (!job) throw new JobNotFoundError(n);
      return job;
    }

    @Get('api/jobs/:id/logs')
    logs(@Param('id') id: string, @Query() query: Record<string, unknown>) {
      return this.dashboard.logs(positiveInt(id, 'id'), query);
    }

    @Get('api/schedules')
    schedules(@Query() query: Record<string, unknown>) {
      return this.dashboard.schedules(query);
    }

    @Get('api/graph/:id')
    graph(@Param('id') id: string) {
      return this.dashboard.graph(positiveInt(id, 'id'));
    }

    @Post('api/jobs/:id/cancel')
    @HttpCode(200)
    @UseGuards(DashboardActionGuard)
    async cancel(@Param('id') id: string) {
      const job = await this.queue.cancel(positiveInt(id, 'id'));
      this.dashboard.invalidate();
      return { id: job.id, state: job.state };
    }

    @Post('api/jobs/:id/retry')
    @HttpCode(200)
    @UseGuards(DashboardActionGuard)
    async retry(@Param('id') id: string) {
      const job = await this.queue.retry(positiveInt(id, 'id'));
      this.dashboard.invalidate();
      return { id: job.id, state: job.state };
    }

    @Post('api/jobs/:id/run-now')
    @HttpCode(200)
    @UseGuards(DashboardActionGuard)
    async runNow(@Param('id') id: string) {
      const job = await this.queue.runNow(positiveInt(id, 'id'));
      this.dashboard.invalidate();
      return { id: job.id, state: job.state, runAfter: job.runAfter };
    }

    @Post('api/jobs/:id/reschedule')
    @HttpCode(200)
    @UseGuards(DashboardActionGuard)
    async reschedule(@Param('id') id: string, @Body() body: unknown) {
      const job = await this.queue.reschedule(positiveInt(id, 'id'), parseRescheduleBody(body));
      this.dashboard.invalidate();
      return { id: job.id, state: job.state, priority: job.priority, runAfter: job.runAfter };
    }

    @Post('api/jobs/:id/remove')
    @HttpCode(200)
    @UseGuards(DashboardActionGuard)
    async remove(@Param('id') id: string) {
      const n = positiveInt(id, 'id');
      await this.queue.remove(n);
      this.dashboard.invalidate();
      return { id: n, removed: true };
    }

    @Post('api/jobs/retry-many')
    @HttpCode(200)
    @UseGuards(DashboardActionGuard)
    async retryMany(@Body() body: unknown) {
      const result = await this.queue.retryMany(this.dashboard.bulkFilter(body));
      this.dashboard.invalidate();
      return result;
    }

    @Post('api/jobs/cancel-many')
    @HttpCode(200)
    @UseGuards(DashboardActionGuard)
    async cancelMany(@Body() body: unknown) {
      const result = await this.queue.cancelMany(this.dashboard.bulkFilter(body));
      this.dashboard.invalidate();
      return result;
    }

    @Post('api/jobs/run-now-many')
    @HttpCode(200)
    @UseGuards(DashboardActionGuard)
    async runNowMany(@Body() body: unknown) {
      const result = await this.queue.runNowMany(this.dashboard.bulkFilter(body));
      this.dashboard.invalidate();
      return result;
    }

    @Post('api/jobs/reschedule-many')
    @HttpCode(200)
    @UseGuards(DashboardActionGuard)
    async rescheduleMany(@Body() body: unknown) {
      // `{ filter, priority?, runAfter? }`: both checked before anything is written.
      const input = parseRescheduleBody(body, ['filter']);
      const result = await this.queue.rescheduleMany(this.dashboard.bulkFilter(body), input);
      this.dashboard.invalidate();
      return result;
    }

    @Post('api/jobs/remove-many')
    @HttpCode(200)
    @UseGuards(DashboardActionGuard)
    async removeMany(@Body() body: unknown) {
      const result = await this.queue.removeMany(this.dashboard.bulkFilter(body));
      this.dashboard.invalidate();
      return result;
    }

    @Post('api/schedules/:name/run-now')
    @HttpCode(200)
    @UseGuards(DashboardActionGuard)
    async runSchedule(@Param('name') name: string) {
      const job = await this.queue.triggerSchedule(name);
      this.dashboard.invalidate();
      return { id: job.id, type: job.type, state: job.state };
    }

    @Post('api/schedules/:name/remove')
    @HttpCode(200)
    @UseGuards(DashboardActionGuard)
    removeSchedule(@Param('name') name: string) {
      return this.dashboard.removeSchedule(name);
    }

    @Post('api/pause')
    @HttpCode(200)
    @UseGuards(DashboardActionGuard)
    async pause(@Body() body: unknown) {
      await this.queue.pause(body as never);
      this.dashboard.invalidate();
      return this.dashboard.paused();
    }

    @Post('api/resume')
    @HttpCode(200)
    @UseGuards(DashboardActionGuard)
    async resume(@Body() body: unknown) {
      await this.queue.resume(body as never);
      this.dashboard.invalidate();
      return this.dashboard.paused();
    }
  }
  return JobQueueDashboardController;
}
