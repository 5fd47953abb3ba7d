import { Injectable, Module } from '@nestjs/common';
import { createInterface } from 'node:readline';
import { JobQueueModule, Recurring, type JobQueueModuleOptions, type RecurringArgs, type RecurringOptions } from '../../lib';
import { bootContext, runWorker, send, workerOptions } from './worker-harness';

type Options = JobQueueModuleOptions & { schedules: Array<RecurringOptions & { cron: string }> };

/**
 * A worker process with the `@Recurring` methods the spec asks for (one provider each), running
 * until the parent writes `stop` (a graceful shutdown) or kills it.
 */
runWorker(async () => {
  const { schedules, ...moduleOptions } = workerOptions<Options>();
  const providers = schedules.map(({ cron, ...options }) => {
    @Injectable()
    class RecurringProvider {
      @Recurring(cron, options)
      async run(_args: RecurringArgs): Promise<void> {}
    }
    Object.defineProperty(RecurringProvider, 'name', { value: `Recurring_${options.name.replace(/\W/g, '_')}` });
    return RecurringProvider;
  });

  @Module({ imports: [JobQueueModule.forRoot(moduleOptions)], providers })
  class AppModule {}

  const app = await bootContext(AppModule);
  send({ type: 'ready' });
  const rl = createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    if (line.trim() !== 'stop') return;
    rl.close();
    process.stdin.destroy();
    void app.close().then(() => {
      send({ type: 'stopped' });
      process.exit(0);
    });
  });
});
