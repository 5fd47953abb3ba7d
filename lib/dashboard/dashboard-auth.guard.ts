import { Inject, Injectable, Logger, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { DASHBOARD_OPTIONS } from './dashboard.constants';
import { DashboardUnauthorizedError } from './dashboard.errors';
import { SECURITY_HEADERS, setHeader } from './dashboard-http';
import type { ResolvedDashboardOptions } from './dashboard.options';

/** Every dashboard route, page, asset and API alike: security headers, then the app's `auth` decision. */
@Injectable()
export class DashboardAuthGuard implements CanActivate {
  private readonly logger = new Logger('JobQueueDashboard');

  constructor(@Inject(DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const res = http.getResponse();
    for (const [name, value] of SECURITY_HEADERS) setHeader(res, name, value);
    if (!this.options.auth) return true;
    let allowed = false;
    try {
      allowed = (await this.options.auth(http.getRequest())) === true;
    } catch (err) {
      this.logger.warn(`dashboard auth function threw, request denied: ${(err as Error)?.message ?? err}`);
    }
    if (allowed) return true;
    if (this.options.challenge) setHeader(res, 'WWW-Authenticate', this.options.challenge);
    throw new DashboardUnauthorizedError();
  }
}
