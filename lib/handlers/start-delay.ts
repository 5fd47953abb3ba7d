import type { AttemptController } from './attempt-controller';

/**
 * Waits until `atMs` on this process's clock, the start a rate window admitted the attempt for;
 * resolves false at once if the attempt is aborted meanwhile (cancelled, shutdown), so its
 * handler never starts.
 */
export function waitForStart(atMs: number, controller: AttemptController): Promise<boolean> {
  if (controller.aborted) return Promise.resolve(false);
  const wait = atMs - Date.now();
  if (wait <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      controller.onAbort(undefined);
      resolve(true);
    }, wait);
    controller.onAbort(() => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}
