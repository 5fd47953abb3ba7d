import { createInterface } from 'node:readline';
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { JobContext, JobHandler, JobQueueModule, type JobQueueModuleOptions } from '../../lib';
import { bootContext, runWorker, send, workerOptions } from './worker-harness';

let ran = 0;

/** A job that only takes time: the fair-share specs read who started when from `started_at`. */
@Injectable()
class NapHandlers {
  @JobHandler('nap')
  async nap(args: { ms: number }, ctx: JobContext): Promise<void> {
    ran++;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, args.ms);
      ctx.signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });
  }
}

@Module({})
class WorkerModule {
  static with(options: JobQueueModuleOptions): DynamicModule {
    return { module: WorkerModule, imports: [JobQueueModule.forRoot(options)], providers: [NapHandlers] };
  }
}

runWorker(async () => {
  const app = await bootContext(WorkerModule.with(workerOptions<JobQueueModuleOptions>()));
  app.enableShutdownHooks(['SIGTERM']);
  send({ type: 'ready', pid: process.pid });
  // `report` on stdin: how many jobs this process ran.
  createInterface({ input: process.stdin }).on('line', (line) => line.trim() === 'report' && send({ type: 'ran', n: ran }));
});
