import { basicAuth, type DashboardAuth } from 'nestjs-sql-job-queue/dashboard';

/**
 * The sample's dashboard auth decision. With DASHBOARD_TOKEN set: HTTP Basic, the token as the
 * password (the browser asks once). Without it: only requests from this machine's loopback
 * address, which is enough for `npm start` on a laptop and refuses everyone else. Behind a
 * reverse proxy every request comes from the proxy: set DASHBOARD_TOKEN there (or use your
 * app's own session, e.g. `(req) => req.user?.roles.includes('admin')`).
 */
export function sampleDashboardAuth(token: string | null): DashboardAuth {
  if (token) return basicAuth({ password: token });
  return (req: { socket?: { remoteAddress?: string } }) => isLoopback(req.socket?.remoteAddress);
}

export function isLoopback(address: string | undefined): boolean {
  return address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';
}
