import type { RetryBackoffOptions } from '../job-queue.options';

/**
 * Delay before the next attempt after `attempt` failed: exponential, capped, with full jitter
 * (a uniform draw below the cap) so that jobs failing together do not retry together.
 */
export function retryDelayMs(attempt: number, options: Required<RetryBackoffOptions>, random: () => number = Math.random): number {
  const ceiling = Math.min(options.maxMs, options.baseMs * options.factor ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}
