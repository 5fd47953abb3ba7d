import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { JobQueueService } from 'nestjs-sql-job-queue';
import { AppModule } from './app.module';
import { loadSampleConfig, type SampleConfig } from './config/sample.config';
import { DemoRunService } from './demo/demo-run.service';
import { startSampleTracing } from './observability/sample-tracing';

/**
 * `npm start`: serves HTTP, and unless SAMPLE_DEMO=0, runs the demo pipelines with a live view.
 * Env: DATABASE_URL (postgres://, mysql://, sqlite:path; unset = ./jobs.sqlite), PORT (3000),
 * DASHBOARD_TOKEN (the dashboard's password; unset = dashboard for localhost only),
 * SAMPLE_TRACING (console, or file:<path> for OpenTelemetry spans as JSON lines; unset = no tracing).
 */
async function bootstrap(): Promise<void> {
  const config = loadSampleConfig(process.env); // fail on a bad DATABASE_URL before connecting
  // Before the app: the SDK registers the global tracer provider the queue's spans go to.
  const tracing = config.tracing ? await startSampleTracing(config.tracing) : undefined;
  // Warnings and errors only: the live view is the interesting output.
  const app = await NestFactory.create(tracing ? tracing.module(AppModule) : AppModule, { logger: ['error', 'warn'], abortOnError: false });
  app.enableShutdownHooks(); // SIGINT/SIGTERM: running jobs get shutdownGraceMs, then hand back their leases
  await app.listen(config.port);
  process.stdout.write(`sample app on ${where(config)}, HTTP on http://localhost:${config.port}\n`);
  if (tracing) process.stdout.write(`tracing: OpenTelemetry spans to ${tracing.where}\n`);
  process.stdout.write(
    `dashboard: http://localhost:${config.port}/dashboard ` +
      (config.dashboardToken ? '(HTTP Basic: any user name, password = DASHBOARD_TOKEN)\n' : '(this machine only; set DASHBOARD_TOKEN to open it to others with a password)\n'),
  );
  if (config.demo) {
    // A recurring digest every 30 s, enqueued once per slot across replicas (see DigestHandlers).
    await app.get(JobQueueService).schedule({ name: 'demo-digest', cron: '*/30 * * * * *', type: 'digest' });
    await app.get(DemoRunService).run();
  }
}

/** The database in words, without a password. */
function where({ queue }: SampleConfig): string {
  if (queue.dialect === 'sqlite') return `SQLite ${queue.url}`;
  const url = new URL(queue.url!);
  return `${queue.dialect} ${url.host}${url.pathname}`;
}

bootstrap().catch((err: Error) => {
  process.stderr.write(`sample app failed to start: ${err.message}\n`);
  process.exit(1);
});
