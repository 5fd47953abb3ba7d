import { ExecutionLog } from '../lib/execution-log';

/**
 * Child side of ChildWorker: options from BENCH_OPTIONS, replies over the IPC channel.
 * `report` → the execution log; `gc` → RSS after a forced collection (needs --expose-gc);
 * `stop` → `close()`, then exit. With `rssSampleMs`, streams `rss` samples.
 */
export function childOptions<T>(): T {
  return JSON.parse(process.env.BENCH_OPTIONS ?? '{}') as T;
}

export function send(message: Record<string, unknown>): void {
  process.send?.(message);
}

export function memory(): { rss: number; heapUsed: number } {
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed };
}

export function serveParent(close: () => Promise<void>, rssSampleMs?: number): void {
  let sampler: NodeJS.Timeout | undefined;
  if (rssSampleMs) sampler = setInterval(() => send({ type: 'rss', at: Date.now(), ...memory() }), rssSampleMs);
  process.on('message', (m: { type: string }) => {
    if (m.type === 'report') send({ type: 'report', snapshot: ExecutionLog.current.snapshot(), ...memory() });
    else if (m.type === 'gc') {
      const gc = (globalThis as { gc?: () => void }).gc;
      gc?.();
      send({ type: 'gc', collected: Boolean(gc), ...memory() });
    } else if (m.type === 'stop') {
      clearInterval(sampler);
      close()
        .then(() => send({ type: 'stopped' }))
        .catch((err) => send({ type: 'error', message: String((err as Error)?.stack ?? err) }))
        .finally(() => process.disconnect?.());
    }
  });
  process.on('disconnect', () => setTimeout(() => process.exit(0), 100).unref());
}

export function runChild(main: () => Promise<void>): void {
  main().catch((err) => {
    send({ type: 'error', message: String((err as Error)?.stack ?? err) });
    setTimeout(() => process.exit(1), 100);
  });
}
