import { Inject, Injectable, Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { withinDeadline } from '../database/answer-deadline';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';
import { NOTIFY_CHANNEL } from './notify.sql';

/**
 * The LISTEN connection is idle: on a half-open one (its server gone without a word) nothing
 * is ever sent, so nothing ever fails, and wake-ups were lost until the process restarted. It
 * is asked for an answer this often (or every queryTimeoutMs, if shorter) and given up like any
 * statement that gets none within queryTimeoutMs.
 */
const LISTEN_PING_MS = 30_000;

interface PgClient {
  /** pg's socket, closed when the ping gets no answer in time. */
  connection?: { stream?: { destroy(): void } };
  query(text: string): Promise<unknown>;
  on(event: 'notification', cb: (msg: { channel: string; payload?: string }) => void): void;
  on(event: 'error' | 'end', cb: (err?: Error) => void): void;
  off(event: string, cb: (...args: never[]) => void): void;
}

interface Subscription {
  onPayload(payload: string): void;
  /** After a reconnect: notifications may have been missed meanwhile. */
  onReconnect(): void;
}

/**
 * Holds one pooled PostgreSQL connection in LISTEN on the channels subscribed so far (the
 * wake-up channel of the worker, the settled-job channel of waitFor), so an idle worker claims
 * within milliseconds of an enqueue or a promotion anywhere in the cluster and a waiter hears
 * of its job at once. Polling stays on as the backstop: a lost notification (a dropped
 * connection) costs at most one poll interval, and the listener reconnects with backoff.
 */
@Injectable()
export class PgNotifyListener {
  private readonly logger = new Logger('JobQueue');
  private readonly channels = new Map<string, Subscription>();
  private client: PgClient | undefined;
  private connecting: Promise<void> | undefined;
  private dataSource: DataSource | undefined;
  private release: ((err?: Error) => void) | undefined;
  /** Set by stop(): nothing reconnects or subscribes afterwards (the application is closing). */
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private tooSmallLogged = false;
  private pingTimer: NodeJS.Timeout | undefined;

  constructor(@Inject(JOB_QUEUE_OPTIONS) private readonly options: Pick<ResolvedJobQueueOptions, 'queryTimeoutMs'>) {}

  /** The worker's wake-up channel; `payload` 'r' is also sent after a reconnect. */
  start(dataSource: DataSource, onPayload: (payload: string) => void): Promise<void> {
    return this.listen(dataSource, NOTIFY_CHANNEL, onPayload, () => onPayload('r'));
  }

  /** Subscribes to `channel` (a trusted identifier), connecting first if need be. */
  async listen(dataSource: DataSource, channel: string, onPayload: (payload: string) => void, onReconnect: () => void): Promise<void> {
    if (this.stopped || this.channels.has(channel)) return;
    if (poolMax(dataSource) < 2) {
      // LISTEN holds its connection for good: with a pool of one, every other statement would
      // wait for it forever (the worker and waitFor hung, silently). Polling does the work.
      if (!this.tooSmallLogged) this.logger.warn('LISTEN needs a pooled connection of its own and the pool has one: polling instead (poolSize: 2 or more for instant wake-ups)');
      this.tooSmallLogged = true;
      return;
    }
    this.dataSource = dataSource;
    this.channels.set(channel, { onPayload, onReconnect });
    if (this.client) {
      await this.client.query(`LISTEN ${channel}`).catch(() => undefined); // a lost connection re-LISTENs all on reconnect
      return;
    }
    if (!this.retryTimer) await (this.connecting ??= this.connect().finally(() => (this.connecting = undefined)));
  }

  /** True while the connection is up and LISTENs on `channel`. */
  isListening(channel: string): boolean {
    return this.client !== undefined && this.channels.has(channel);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    await this.connecting;
    const release = this.release;
    this.release = undefined;
    this.client = undefined;
    // Handing the connection back as broken makes the pool close it, LISTEN and all.
    release?.(new Error('LISTEN stopped'));
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    try {
      const driver = this.dataSource!.driver as unknown as { obtainMasterConnection(): Promise<[PgClient, (err?: Error) => void]> };
      const [client, release] = await driver.obtainMasterConnection();
      this.release = release;
      const onNotification = (msg: { channel: string; payload?: string }) => this.channels.get(msg.channel)?.onPayload(msg.payload ?? '');
      const lost = (err?: Error) => {
        clearInterval(this.pingTimer);
        client.off('notification', onNotification);
        client.off('error', lost);
        client.off('end', lost);
        if (this.release !== release) return; // stopped, or already handled
        this.release = undefined;
        this.client = undefined;
        release(err ?? new Error('LISTEN connection ended'));
        this.scheduleReconnect(err);
      };
      client.on('notification', onNotification);
      client.on('error', lost);
      client.on('end', lost);
      // A channel subscribed while these run is visited too (Map iteration sees new entries).
      for (const channel of this.channels.keys()) await client.query(`LISTEN ${channel}`);
      if (this.stopped) return; // stop() awaits this connect, then hands the connection back
      this.client = client;
      this.keepAsking(client);
      if (this.failures) this.logger.log('LISTEN connection restored');
      const reconnected = this.failures > 0;
      this.failures = 0;
      // The worker re-checks for ready work on every (re)connect; waiters only after an outage.
      for (const [channel, sub] of this.channels) if (reconnected || channel === NOTIFY_CHANNEL) sub.onReconnect();
    } catch (err) {
      this.scheduleReconnect(err as Error);
    }
  }

  /** Pings the LISTEN connection (see LISTEN_PING_MS); one that does not answer is closed, and `lost` reconnects. */
  private keepAsking(client: PgClient): void {
    const deadline = this.options.queryTimeoutMs;
    if (!deadline) return;
    let asking = false;
    this.pingTimer = setInterval(() => {
      if (asking || this.client !== client) return;
      asking = true;
      withinDeadline(client.query('SELECT 1'), deadline, () => client.connection?.stream?.destroy())
        .catch(() => undefined) // a failure ends the connection, which `lost` hears
        .finally(() => (asking = false));
    }, Math.min(LISTEN_PING_MS, deadline));
    this.pingTimer.unref();
  }

  private scheduleReconnect(err?: Error): void {
    if (this.stopped) return;
    if (this.failures++ === 0) this.logger.warn(`LISTEN connection lost (${err?.message ?? 'ended'}); polling until it is back`);
    const delay = Math.min(10_000, 100 * 2 ** Math.min(this.failures, 7));
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void (this.connecting ??= this.connect().finally(() => (this.connecting = undefined)));
    }, delay);
  }
}

/** The pool's connection limit (pg-pool's `max`, from poolSize or the application's DataSource); Infinity if unknown. */
function poolMax(dataSource: DataSource): number {
  const max = (dataSource.driver as unknown as { master?: { options?: { max?: unknown } } }).master?.options?.max;
  return typeof max === 'number' ? max : Infinity;
}
