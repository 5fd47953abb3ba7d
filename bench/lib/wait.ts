import { setTimeout as sleep } from 'node:timers/promises';
import { wallNow } from './execution-log';

export class WaitTimeoutError extends Error {}

/**
 * Polls `remaining()` until it returns 0 and returns the wall time of that successful poll.
 * Polls every `slowMs` while much is left and every `fastMs` near the end (under `nearEnd`
 * remaining), so the end time is precise without loading the database for the whole run.
 * `ready()` (cheap, in-process) can hold off database polling until it turns true.
 */
export async function waitUntilDrained(options: {
  remaining: () => Promise<number>;
  total: number;
  timeoutMs: number;
  ready?: () => boolean;
  slowMs?: number;
  fastMs?: number;
  what?: string;
}): Promise<number> {
  const { remaining, total, timeoutMs } = options;
  const slowMs = options.slowMs ?? 50;
  const fastMs = options.fastMs ?? 5;
  const nearEnd = Math.max(10, Math.ceil(total * 0.05));
  const deadline = Date.now() + timeoutMs;
  let left = total;
  for (;;) {
    if (Date.now() > deadline) throw new WaitTimeoutError(`${options.what ?? 'jobs'}: ${left} of ${total} still open after ${timeoutMs} ms`);
    if (options.ready && !options.ready()) {
      await sleep(2);
      continue;
    }
    left = await remaining();
    if (left <= 0) return wallNow();
    await sleep(left > nearEnd ? slowMs : fastMs);
  }
}

/** Generous per-run limit: one minute plus 10 ms per job. */
export function drainTimeout(jobs: number): number {
  return 60_000 + 10 * jobs;
}
