import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { JobContext, JobHandler } from 'nestjs-sql-job-queue';

/** Job type of the demo's background load (many short jobs per tenant). */
export const DEMO_LOAD_TYPE = 'demo-load';

/**
 * Short, uniform jobs the demo enqueues for each tenant before the pipelines: enough ready work
 * in both groups at once that fair share has to choose, so the slot shares follow the weights.
 */
@Injectable()
export class DemoLoadHandlers {
  @JobHandler(DEMO_LOAD_TYPE)
  async load(_args: { n: number }, ctx: JobContext): Promise<null> {
    await sleep(150, undefined, { signal: ctx.signal });
    return null;
  }
}
