import { Injectable, type INestApplication, type Type } from '@nestjs/common';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { execFileSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { JobHandler, JobQueueModule, JobQueueService, type JobQueueModuleOptions } from '../../lib';
import { JobQueueDashboardModule, type JobQueueDashboardOptions } from '../../lib/dashboard';
import type { TestDatabase } from './test-databases';

/** Builds the browser bundle the dashboard serves (dist/dashboard-ui), as `npm run build` does. */
export function buildDashboardUi(): void {
  execFileSync(process.execPath, [join(process.cwd(), 'scripts', 'build-dashboard-ui.cjs')], { stdio: 'inherit' });
}

/** Handlers the dashboard specs enqueue: `work` returns its args, `boom` throws args.message. */
@Injectable()
export class DashboardTestHandlers {
  @JobHandler('work')
  async work(args: { ms?: number }) {
    if (args?.ms) await new Promise((r) => setTimeout(r, args.ms));
    return { ok: true };
  }

  @JobHandler('boom', { maxAttempts: 1 })
  async boom(args: { message: string }) {
    throw new Error(args.message);
  }
}

export interface DashboardApp {
  app: INestApplication;
  queue: JobQueueService;
  /** http://127.0.0.1:port + global prefix + dashboard path */
  url: string;
  origin: string;
  close(): Promise<void>;
}

export async function startDashboardApp(
  db: TestDatabase,
  dashboard: JobQueueDashboardOptions,
  options: { queue?: Partial<JobQueueModuleOptions>; globalPrefix?: string; providers?: Type[]; adapter?: AbstractHttpAdapter } = {},
): Promise<DashboardApp> {
  const module = await Test.createTestingModule({
    imports: [JobQueueModule.forRoot(db.options({ pollIntervalMs: 100, ...options.queue }) as never), JobQueueDashboardModule.forRoot(dashboard)],
    providers: [DashboardTestHandlers, ...(options.providers ?? [])],
  }).compile();
  const app = options.adapter
    ? module.createNestApplication(options.adapter, { logger: ['error'] })
    : module.createNestApplication({ logger: ['error'] });
  if (options.globalPrefix) app.setGlobalPrefix(options.globalPrefix);
  await app.listen(0, '127.0.0.1');
  // The specs' fetch shares this process's event loop. After a synchronous stretch (better-sqlite3,
  // a big assertion) the server's 5 s keep-alive timer could close an idle socket just as fetch
  // reused it (read ECONNRESET under load); the client's own, shorter idle timeout closes them instead.
  app.getHttpServer().keepAliveTimeout = 65_000;
  const { port } = app.getHttpServer().address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const prefix = options.globalPrefix ? `/${options.globalPrefix}` : '';
  return {
    app,
    queue: app.get(JobQueueService),
    url: `${origin}${prefix}/${(dashboard.path ?? 'queue').replace(/^\/+|\/+$/g, '')}`,
    origin,
    close: () => app.close(),
  };
}

/** The CSRF token the page carries (as the browser would read it). */
export async function csrfToken(url: string, headers: Record<string, string> = {}): Promise<string> {
  const html = await (await fetch(url, { headers })).text();
  const m = /<meta name="jq-csrf" content="([^"]+)">/.exec(html);
  if (!m) throw new Error(`no CSRF token in the page: ${html.slice(0, 200)}`);
  return m[1];
}
