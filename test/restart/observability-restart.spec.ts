import { Controller, Get, Module, type DynamicModule, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { JobQueueModule, type JobQueueModuleOptions } from '../../lib';
import { JobQueueHealthIndicator, JobQueueHealthModule } from 'nestjs-sql-job-queue/health';
import { ensureMariadbUp, ensurePostgresUp, stopMariadb, stopPostgres } from '../support/db-servers';
import { describeDialects } from '../support/describe-dialects';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly queue: JobQueueHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.queue.isHealthy('jobQueue', { timeoutMs: 2_000 })]);
  }
}

@Module({})
class HealthApp {
  static with(options: JobQueueModuleOptions): DynamicModule {
    return { module: HealthApp, imports: [TerminusModule, JobQueueModule.forRoot(options), JobQueueHealthModule], controllers: [HealthController] };
  }
}

type Health = { status: string; details: Record<string, { status: string; message?: string }> };

async function health(base: string): Promise<{ code: number; body: Health }> {
  const res = await fetch(`${base}/health`);
  return { code: res.status, body: (await res.json()) as Health };
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check().catch(() => false)) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

// The server-stop case of the health indicator (issue 12): down while PostgreSQL / MariaDB is
// stopped, up again once it is back. It stops the shared servers, so it runs in phase 2, alone.
describeDialects(
  'health goes down when the database server stops, and up again after',
  (db) => {
    let app: INestApplication | undefined;
    afterAll(async () => {
      await (db.dialect === 'postgres' ? ensurePostgresUp() : ensureMariadbUp());
      await app?.close().catch(() => undefined);
    });

    it('up → down (server stopped) → up (server started)', async () => {
      const options = db.options({ pollIntervalMs: 200, heartbeatIntervalMs: 500, leaseTtlMs: 4_000, externalTypes: ['nobody'] });
      app = await NestFactory.create(HealthApp.with(options), { logger: ['error'], abortOnError: false });
      await app.listen(0, '127.0.0.1');
      const base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
      expect((await health(base)).body.details.jobQueue.status).toBe('up');

      if (db.dialect === 'postgres') stopPostgres();
      else stopMariadb();
      let down: { code: number; body: Health } | undefined;
      const downAfter = await until('health down', async () => {
        down = await health(base);
        return down.body.details.jobQueue.status === 'down';
      }, 30_000);
      expect(down!.code).toBe(503);
      expect(down!.body.details.jobQueue.message).toMatch(/database unreachable|failing for/);

      await (db.dialect === 'postgres' ? ensurePostgresUp() : ensureMariadbUp());
      const upAfter = await until('health up again', async () => (await health(base)).body.details.jobQueue.status === 'up', 60_000);
      process.stdout.write(`[${db.dialect}] health down ${downAfter} ms after the stop; up ${upAfter} ms after the start\n`);
    }, 180_000);
  },
  ['postgres', 'mysql'],
);
