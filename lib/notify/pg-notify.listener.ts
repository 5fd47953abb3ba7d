import { Injectable, Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { NOTIFY_CHANNEL } from './notify.sql';

interface PgClient {
  query(text: string): Promise<unknown>;
  on(event: 'notification', cb: (msg: { channel: string; payload?: string }) => void): void;
  on(event: 'error' | 'end', cb: (err?: Error) => void): void;
  off(event: string, cb: (...args: never[]) => void): void;
}

/**
 * Holds one pooled PostgreSQL connection in LISTEN, so an idle worker claims within
 * milliseconds of an enqueue or a promotion anywhere in the cluster. Polling stays on as the
 * backstop: a lost notification (a dropped connection) costs at most one poll interval, and
 * the listener reconnects with backoff.
 */
@Injectable()
export class PgNotifyListener {
  private readonly logger = new Logger('JobQueue');
  private release: ((err?: Error) => void) | undefined;
  private stopped = true;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;

  async start(dataSource: DataSource, onPayload: (payload: string) => void): Promise<void> {
    this.stopped = false;
    await this.connect(dataSource, onPayload);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const release = this.release;
    this.release = undefined;
    // Handing the connection back as broken makes the pool close it, LISTEN and all.
    release?.(new Error('LISTEN stopped'));
  }

  private async connect(dataSource: DataSource, onPayload: (payload: string) => void): Promise<void> {
    if (this.stopped) return;
    try {
      const driver = dataSource.driver as unknown as { obtainMasterConnection(): Promise<[PgClient, (err?: Error) => void]> };
      const [client, release] = await driver.obtainMasterConnection();
      this.release = release;
      const onNotification = (msg: { channel: string; payload?: string }) => msg.channel === NOTIFY_CHANNEL && onPayload(msg.payload ?? '');
      const lost = (err?: Error) => {
        client.off('notification', onNotification);
        client.off('error', lost);
        client.off('end', lost);
        if (this.release !== release) return; // stopped, or already handled
        this.release = undefined;
        release(err ?? new Error('LISTEN connection ended'));
        this.scheduleReconnect(dataSource, onPayload, err);
      };
      client.on('notification', onNotification);
      client.on('error', lost);
      client.on('end', lost);
      await client.query(`LISTEN ${NOTIFY_CHANNEL}`);
      if (this.failures) this.logger.log('LISTEN connection restored');
      this.failures = 0;
      onPayload('r'); // notifications may have been missed while disconnected
    } catch (err) {
      this.scheduleReconnect(dataSource, onPayload, err as Error);
    }
  }

  private scheduleReconnect(dataSource: DataSource, onPayload: (payload: string) => void, err?: Error): void {
    if (this.stopped) return;
    if (this.failures++ === 0) this.logger.warn(`LISTEN connection lost (${err?.message ?? 'ended'}); polling until it is back`);
    const delay = Math.min(10_000, 100 * 2 ** Math.min(this.failures, 7));
    this.retryTimer = setTimeout(() => void this.connect(dataSource, onPayload), delay);
  }
}
