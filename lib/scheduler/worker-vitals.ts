import { Injectable } from '@nestjs/common';

/**
 * What this process's claim loop and lease renewal last achieved, for health checks: a few
 * timestamps set in memory on the paths that already run, no database work. `0` = never.
 */
@Injectable()
export class WorkerVitals {
  /** Jobs this process is running now (set by the scheduler). */
  inFlight = 0;
  /** The worker loop is running in this process (false for an enqueue-only process). */
  working = false;
  lastClaimAt = 0;
  /** Since when claims have been failing (0 = the last claim succeeded). */
  claimFailingSince = 0;
  /**
   * Since when the claim in flight has waited for the database (0 = none in flight). A statement
   * waiting on a lock (a table another session holds locked) neither succeeds nor fails.
   */
  claimWaitingSince = 0;
  lastHeartbeatAt = 0;
  heartbeatFailingSince = 0;
  /** Since when the lease renewal in flight has waited for the database (0 = none in flight). */
  heartbeatWaitingSince = 0;
  /** Rate-limited jobs handed back because this process reached them after their start grace: a starved process. */
  lateStarts = 0;

  claimStarted(now = Date.now()): void {
    this.claimWaitingSince = now;
  }

  claimSucceeded(now = Date.now()): void {
    this.lastClaimAt = now;
    this.claimFailingSince = 0;
    this.claimWaitingSince = 0;
  }

  claimFailed(now = Date.now()): void {
    if (!this.claimFailingSince) this.claimFailingSince = now;
    this.claimWaitingSince = 0;
  }

  heartbeatStarted(now = Date.now()): void {
    this.heartbeatWaitingSince = now;
  }

  heartbeatSucceeded(now = Date.now()): void {
    this.lastHeartbeatAt = now;
    this.heartbeatFailingSince = 0;
    this.heartbeatWaitingSince = 0;
  }

  heartbeatFailed(now = Date.now()): void {
    if (!this.heartbeatFailingSince) this.heartbeatFailingSince = now;
    this.heartbeatWaitingSince = 0;
  }
}
