import { Inject, Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppTransactionOpenError } from '../errors/sqlite.errors';
import { JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import type { ResolvedJobQueueOptions } from '../job-queue.options';

/** How long an enqueue waits for the app's open SQLite transaction before calling it a deadlock. */
export const APP_TRANSACTION_GRACE_MS = 1_000;

/**
 * SQLite with the application's DataSource: the queue writes through its own connection to the
 * same file, so while the app's single connection has a transaction open, the queue cannot
 * write. Awaiting an enqueue inside that transaction would wait for the lock until the busy
 * deadline (a minute); this guard fails it within a second with the fix (`{ manager }`). A
 * transaction of another request that commits within the grace period is simply waited for.
 */
@Injectable()
export class AppTransactionGuard {
  constructor(@Inject(JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions) {}

  async assertNoOpenAppTransaction(): Promise<void> {
    if (this.options.dialect !== 'sqlite' || !this.appInTransaction()) return;
    const start = Date.now();
    while (Date.now() - start < APP_TRANSACTION_GRACE_MS) {
      await sleep(10);
      if (!this.appInTransaction()) return;
    }
    throw new AppTransactionOpenError(Date.now() - start);
  }

  private appInTransaction(): boolean {
    // better-sqlite3's Database reports its own transaction state; TypeORM's driver holds one.
    const driver = this.options.dataSource?.driver as { databaseConnection?: { inTransaction?: boolean } } | undefined;
    return driver?.databaseConnection?.inTransaction === true;
  }
}
