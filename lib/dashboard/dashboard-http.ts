/** Minimal request/response access that works on Express and Fastify alike. */
export interface HttpRequestLike {
  method?: string;
  url?: string;
  originalUrl?: string;
  headers: Record<string, string | string[] | undefined>;
  query?: Record<string, unknown>;
  body?: unknown;
}

export function setHeader(res: any, name: string, value: string): void {
  if (typeof res.header === 'function') res.header(name, value);
  else if (typeof res.setHeader === 'function') res.setHeader(name, value);
}

export function header(req: HttpRequestLike, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Sent with every dashboard response, errors included. The CSP allows only the dashboard's own
 * script and stylesheet: an injected `<script>` or `onerror=` attribute would not run even if
 * some data ever reached the page as HTML.
 */
export const SECURITY_HEADERS: ReadonlyArray<[string, string]> = [
  [
    'Content-Security-Policy',
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
      "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  ],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cache-Control', 'no-store'],
  ['Cross-Origin-Resource-Policy', 'same-origin'],
];
