import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { CSRF_HEADER, DASHBOARD_CSRF_TOKEN, DASHBOARD_OPTIONS } from './dashboard.constants';
import { DashboardCsrfError, DashboardReadOnlyError } from './dashboard.errors';
import { header, type HttpRequestLike } from './dashboard-http';
import type { ResolvedDashboardOptions } from './dashboard.options';

/**
 * Actions only: refused on a read-only dashboard, and refused unless the request carries the
 * page's CSRF token in a custom header (which no cross-site form, link or image can send, and a
 * cross-origin script can only send after a CORS preflight we never grant) and, when the browser
 * says where it comes from, comes from this very origin.
 */
@Injectable()
export class DashboardActionGuard implements CanActivate {
  constructor(
    @Inject(DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
    @Inject(DASHBOARD_CSRF_TOKEN) private readonly token: string,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    if (this.options.readOnly) throw new DashboardReadOnlyError();
    const req = context.switchToHttp().getRequest<HttpRequestLike>();
    checkSameOrigin(req);
    const sent = header(req, CSRF_HEADER);
    if (!sent || !equal(sent, this.token)) throw new DashboardCsrfError(`missing or wrong ${CSRF_HEADER} header`);
    const type = header(req, 'content-type') ?? '';
    if (!/^application\/json\b/i.test(type)) throw new DashboardCsrfError('actions take a JSON body (Content-Type: application/json)');
    return true;
  }
}

/** Origin (or Sec-Fetch-Site) present and not this host: refused. Absent: the token decides (pure). */
export function checkSameOrigin(req: HttpRequestLike): void {
  const site = header(req, 'sec-fetch-site');
  if (site && site !== 'same-origin' && site !== 'none') throw new DashboardCsrfError(`cross-site request (Sec-Fetch-Site: ${site})`);
  const origin = header(req, 'origin');
  if (origin === undefined) return;
  const host = header(req, 'x-forwarded-host') ?? header(req, 'host');
  let originHost: string | null = null;
  try {
    originHost = origin === 'null' ? null : new URL(origin).host;
  } catch {
    originHost = null;
  }
  if (!host || originHost !== host.split(',')[0].trim()) throw new DashboardCsrfError('the Origin header is not this site');
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
