import { NestFactory } from '@nestjs/core';
import type { Type } from '@nestjs/common';
import type { OurRows } from './our-rows';

/**
 * Starts a worker app of `module` on jobs already enqueued and closes it once the database shows
 * none of `type` in `range` open. `ms`: from the first poll on which `started()` is true (a
 * handler ran) to the close; `cpuUs`: this process's CPU over the whole pass, boot included.
 * The loop of the standalone before/after tools (failure-mix, second-runs).
 */
export async function timeWorkerPass(
  module: Type,
  rows: OurRows,
  range: [number, number],
  type: string,
  started: () => boolean,
): Promise<{ ms: number; cpuUs: number }> {
  const cpu = process.cpuUsage();
  const worker = await NestFactory.createApplicationContext(module, { logger: ['error', 'warn'] });
  let first = 0;
  try {
    for (;;) {
      await new Promise((r) => setTimeout(r, 20));
      if (!first && started()) first = performance.now();
      if ((await rows.open(range, type)) === 0) break;
    }
  } finally {
    await worker.close();
  }
  const ms = performance.now() - first;
  const used = process.cpuUsage(cpu);
  return { ms, cpuUs: used.user + used.system };
}
