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
    let timer: NodeJS.Timeout;
    // A timer may fire a millisecond early by the wall clock the start was computed on: re-arm.
    const arm = (ms: number) =>
      (timer = setTimeout(() => {
        const left = atMs - Date.now();
        if (left > 0) return arm(left);
        controller.onAbort(undefined);
        resolve(true);
      }, ms));
    arm(wait);
    controller.onAbort(() => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}
