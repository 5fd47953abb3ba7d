/**
 * One attempt's abort switch, shaped like AbortController. The AbortSignal is created only when
 * a handler reads `ctx.signal`: most short handlers never do, and an AbortController plus its
 * listener per job was a tenth of a no-op job's CPU in the worker. Aborting before anyone
 * asked still yields an already-aborted signal when one is asked for later.
 */
export class AttemptController {
  private controller: AbortController | undefined;
  private listener: ((reason: unknown) => void) | undefined;
  private abortReason: unknown;
  private wasAborted = false;

  get aborted(): boolean {
    return this.wasAborted;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  get reason(): unknown {
    return this.abortReason;
  }

  /** Idempotent: the first reason wins, as with AbortController. */
  abort(reason: unknown): void {
    if (this.wasAborted) return;
    this.wasAborted = true;
    this.abortReason = reason;
    this.controller?.abort(reason);
    const listener = this.listener;
    this.listener = undefined;
    listener?.(reason);
  }

  /** The engine's own listener (one at most); handlers listen on `signal`. */
  onAbort(listener: ((reason: unknown) => void) | undefined): void {
    this.listener = listener;
  }
}
