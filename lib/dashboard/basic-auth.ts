import { timingSafeEqual } from 'node:crypto';
import type { DashboardAuth } from './dashboard.options';

/**
 * An `auth` function for HTTP Basic authentication: the browser asks for the credentials
 * (denials carry `WWW-Authenticate`). Use it over HTTPS only; a username is optional.
 */
export function basicAuth(credentials: { username?: string; password: string }): DashboardAuth {
  if (!credentials || typeof credentials.password !== 'string' || credentials.password.length < 8) {
    throw new TypeError('basicAuth: password must be a string of at least 8 characters');
  }
  const check = (req: { headers?: Record<string, unknown> }): boolean => {
    const header = req.headers?.authorization;
    if (typeof header !== 'string' || !/^Basic /i.test(header)) return false;
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return false;
    const userOk = credentials.username === undefined || same(decoded.slice(0, colon), credentials.username);
    return same(decoded.slice(colon + 1), credentials.password) && userOk;
  };
  return Object.assign(check, { challenge: 'Basic realm="job queue dashboard", charset="UTF-8"' });
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
