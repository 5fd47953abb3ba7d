import type { Provider, Type } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { JOB_QUEUE_DATA_SOURCE, JobQueueModule, JobQueueService, type JobQueueModuleOptions } from '../../lib';
import { JobQueueDatabase } from '../../lib/database/job-queue.database';
import { sql } from '../../lib/database/sql';
import type { TestDatabase } from './test-databases';

export interface QueueApp {
  module: TestingModule;
  queue: JobQueueService;
  db: JobQueueDatabase;
  dataSource: DataSource;
  /** Rows of a raw query, for assertions. */
  rows(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  count(where?: string): Promise<number>;
  close(): Promise<void>;
}

/** Boots the module the way an application does, on a test database. */
export async function startQueueApp(
  db: TestDatabase,
  options: Partial<JobQueueModuleOptions> = {},
  providers: Array<Provider | Type> = [],
): Promise<QueueApp> {
  const module = await Test.createTestingModule({
    imports: [JobQueueModule.forRoot(db.options(options) as never)],
    providers,
  }).compile();
  try {
    await module.init();
  } catch (err) {
    await module.close().catch(() => undefined); // release the DataSource the failed boot opened
    throw err;
  }
  const database = module.get(JobQueueDatabase);
  const dataSource = module.get<DataSource>(JOB_QUEUE_DATA_SOURCE);
  const rows = (text: string, params: unknown[] = []) => dataSource.query(text, params) as Promise<Record<string, unknown>[]>;
  return {
    module,
    queue: module.get(JobQueueService),
    db: database,
    dataSource,
    rows,
    count: async (where = '1=1') => Number((await rows(`SELECT COUNT(*) AS n FROM jobs WHERE ${where}`))[0].n),
    close: () => module.close(),
  };
}

/** Empties the queue tables between specs that share a database. */
export async function resetTables(app: QueueApp): Promise<void> {
  await app.db.run(sql`DELETE FROM job_deps`);
  await app.db.run(sql`DELETE FROM job_logs`);
  await app.db.run(sql`DELETE FROM jobs`);
}
