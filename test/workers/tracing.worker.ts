import { Injectable, Module } from '@nestjs/common';
import { createInterface } from 'node:readline';
import { trace } from '@opentelemetry/api';
import { JobHandler, JobQueueModule, type JobContext, type JobQueueModuleOptions } from '../../lib';
import { JobQueueTracingModule } from '../../lib/tracing';
import { installTracingSdk } from '../support/tracing-sdk';
import { bootContext, runWorker, send, workerOptions } from './worker-harness';

@Injectable()
class RemoteJobs {
  @JobHandler('remote')
  async remote(_args: unknown, ctx: JobContext): Promise<{ ran: number }> {
    // A span of the handler's own, which must nest under the attempt's span.
    await trace.getTracer('user').startActiveSpan('remote user work', async (span) => span.end());
    return { ran: ctx.id };
  }
}

/** A worker process with tracing and an in-memory exporter; writes `spans` back when asked. */
runWorker(async () => {
  const sdk = installTracingSdk();
  @Module({ imports: [JobQueueModule.forRoot(workerOptions<JobQueueModuleOptions>()), JobQueueTracingModule.forRoot()], providers: [RemoteJobs] })
  class AppModule {}
  const app = await bootContext(AppModule);
  send({ type: 'ready' });
  const rl = createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    if (line.trim() === 'spans') send({ type: 'spans', spans: sdk.spans() });
    if (line.trim() === 'stop') {
      rl.close();
      process.stdin.destroy();
      void app.close().then(() => {
        send({ type: 'stopped' });
        process.exit(0);
      });
    }
  });
});
