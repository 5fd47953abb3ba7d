import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { JobQueueError } from '../errors/job-queue.error';

/** HTTP status of each typed error the dashboard answers with; other JobQueueErrors are 400. */
const STATUS: Record<string, number> = {
  DASHBOARD_UNAUTHORIZED: 401,
  DASHBOARD_CSRF: 403,
  DASHBOARD_READ_ONLY: 403,
  JOB_NOT_FOUND: 404,
  SCHEDULE_NOT_FOUND: 404,
  SCHEDULE_DECLARED: 409,
  INVALID_JOB_STATE: 409,
  JOB_STILL_NEEDED: 409,
};

/** Typed errors → `{ error: code, message }` with a fitting status; anything else → 500 without details. */
@Catch()
export class DashboardErrorsFilter implements ExceptionFilter {
  private readonly logger = new Logger('JobQueueDashboard');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(err: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse();
    const { httpAdapter } = this.adapterHost;
    if (err instanceof JobQueueError) {
      httpAdapter.reply(res, { error: err.code, message: err.message.slice(0, 2_000) }, STATUS[err.code] ?? 400);
      return;
    }
    if (err instanceof HttpException) {
      httpAdapter.reply(res, { error: 'HTTP_' + err.getStatus(), message: err.message.slice(0, 500) }, err.getStatus());
      return;
    }
    this.logger.error(`dashboard request failed: ${(err as Error)?.stack ?? err}`);
    httpAdapter.reply(res, { error: 'INTERNAL', message: 'Internal error; see the server log.' }, 500);
  }
}
