import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { poolGauge } from './cap-pool';
import { poolProbeDelayMs } from './pool-probe-delay';
import { probeConnection } from './probe-connection';

/**
 * Raises the queue's own pool back to its configured size after a refusal lowered it (see
 * capPoolAtOpen): after a back-off it probes the server with one connection beside the pool; if
 * the server accepts it, the pool may open one more, and the next probe follows shortly; if
 * not, or if the server refuses the pool the connection it was allowed, the wait doubles (see
 * poolProbeDelayMs). A worker that met a transient spike thus gets its pool back within seconds
 * of the server having room, while at a limit that holds it costs the server one refused
 * connection per half minute. Logs once when the pool is back to its size.
 */
export class PoolRecovery {
  private readonly logger = new Logger('JobQueue');
  /** The pool's size as configured, while it is lowered; undefined when it is not. */
  private size: number | undefined;
  /** Refusals in this episode: probes refused, and raised limits the pool was refused. */
  private refusals = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Counts onLowered calls: a probe that a refusal overtook raises nothing. */
  private lowerings = 0;
  /** Probes made, and of those refused: for tests and diagnostics. */
  readonly probes = { made: 0, refused: 0 };

  constructor(
    private readonly dataSource: DataSource,
    private readonly probe: () => Promise<void> = () => probeConnection(dataSource),
  ) {}

  /** Whether the pool is below its configured size (a refusal lowered it, and it has not climbed back yet). */
  get lowered(): boolean {
    return this.size !== undefined;
  }

  /**
   * The pool was lowered from `was` after the server refused it a connection. The first time in
   * an episode `was` is the configured size; later it is a raised limit the server refused.
   */
  onLowered(was: number): void {
    if (this.stopped) return;
    this.lowerings++;
    if (this.size === undefined) this.size = was;
    else this.refusals++;
    this.schedule(false);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(accepted: boolean): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.step(), poolProbeDelayMs(this.refusals, accepted));
    this.timer.unref(); // never what keeps a process alive
  }

  private async step(): Promise<void> {
    this.timer = undefined;
    if (this.stopped || this.size === undefined || !this.dataSource.isInitialized) return;
    let accepted = true;
    const lowerings = this.lowerings;
    this.probes.made++;
    try {
      await this.probe();
    } catch {
      accepted = false;
      this.probes.refused++;
      this.refusals++;
    }
    // Lowered again while the probe was out: that refusal's back-off stands.
    if (this.stopped || this.size === undefined || !this.dataSource.isInitialized || lowerings !== this.lowerings) return;
    const pool = poolGauge(this.dataSource);
    if (!pool) return;
    if (accepted) pool.setLimit(Math.min(this.size, pool.limit + 1));
    if (pool.limit >= this.size) {
      this.logger.log(`the database has room again: the queue's pool is back to its ${this.size} connections`);
      this.size = undefined;
      this.refusals = 0;
      return;
    }
    this.schedule(accepted);
  }
}
