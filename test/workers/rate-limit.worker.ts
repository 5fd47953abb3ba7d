import { Injectable, Module } from '@nestjs/common';
import { createInterface } from 'node:readline';
import { JobHandler, JobQueueModule, type JobContext, type JobQueueModuleOptions } from '../../lib';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import { sql } from '../../lib/database/sql';
import { bootContext, runWorker, send, workerOptions } from './worker-harness';

type Options = JobQueueModuleOptions & { types: string[] };

/**
 * A worker process with one handler per type the spec names; each handler writes its start
 * time (this process's clock, the same host as the others) to `rl_starts`, then sleeps
 * `args.ms`. Runs until the parent writes `stop` or kills it.
 */
runWorker(async () => {
  const { types, ...moduleOptions } = workerOptions<Options>();
  const providers = types.map((type) => {
    @Injectable()
    class RateProbe {
      constructor(private readonly db: JobQueueDatabase) {}

      @JobHandler(type)
      async run(args: { ms?: number }, ctx: JobContext): Promise<void> {
        const at = Date.now();
        // The claim's time too (this attempt's started_at, written by the claim on the database clock).
        const d = this.db.dialect.name;
        const claimed =
          d === 'postgres'
            ? sql`(extract(epoch from started_at) * 1000)::bigint`
            : d === 'mysql'
              ? sql`TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', started_at) DIV 1000`
              : sql`CAST(ROUND((julianday(started_at) - 2440587.5) * 86400000.0) AS INTEGER)`;
        await this.db.run(sql`INSERT INTO rl_starts (job_id, type, group_key, at_ms, claimed_ms, worker)
          SELECT ${ctx.id}, ${type}, ${ctx.group}, ${at}, ${claimed}, ${process.pid} FROM jobs WHERE id = ${ctx.id}`);
        if (args?.ms) await new Promise((r) => setTimeout(r, args.ms));
      }
    }
    Object.defineProperty(RateProbe, 'name', { value: `RateProbe_${type.replace(/\W/g, '_')}` });
    return RateProbe;
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
