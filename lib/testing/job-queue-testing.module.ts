import { Inject, Injectable, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobQueueConnection } from '../database/job-queue.connection';
import { JobQueueModule } from '../job-queue.module';
import type { JobQueueModuleOptions } from '../job-queue.options';
import { JobQueueTester } from './job-queue.tester';

const TESTING_DIRECTORY = Symbol('JOB_QUEUE_TESTING_DIRECTORY');

/** Removes the temporary database once the queue has closed its connection. */
@Injectable()
class TestingDatabaseCleanup implements OnApplicationShutdown {
  constructor(
    @Inject(TESTING_DIRECTORY) private readonly directory: string,
    private readonly moduleRef: ModuleRef,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    // The queue closes its DataSource in its own shutdown hook; hook order across modules is
    // not guaranteed, and closing twice is harmless.
    await this.moduleRef.get(JobQueueConnection, { strict: false }).close().catch(() => undefined);
    rmSync(this.directory, { recursive: true, force: true });
  }
}

/** Options of `JobQueueTestingModule.forRoot`: the module's options, minus where the database is. */
export type JobQueueTestingOptions = Partial<Omit<JobQueueModuleOptions, 'dialect' | 'url' | 'database' | 'dataSource'>>;

/**
 * The queue on a temporary SQLite file, for `@nestjs/testing`: import it instead of
 * `JobQueueModule`, add your handler providers, and use `JobQueueTester` to `drain()` the queue
 * or `run()` one handler. The file is removed when the testing module closes.
 */
@Module({})
export class JobQueueTestingModule {
  static forRoot(options: JobQueueTestingOptions = {}): DynamicModule {
    const directory = mkdtempSync(join(tmpdir(), 'job-queue-test-'));
    return {
      module: JobQueueTestingModule,
      global: true,
      imports: [
        JobQueueModule.forRoot({
          // Fast feedback: claim often and close quickly; every option can be overridden.
          pollIntervalMs: 10,
          shutdownGraceMs: 1_000,
          ...options,
          dialect: 'sqlite',
          database: join(directory, 'jobs.sqlite'),
        }),
      ],
      providers: [{ provide: TESTING_DIRECTORY, useValue: directory }, TestingDatabaseCleanup, JobQueueTester],
      exports: [JobQueueTester, JobQueueModule],
    };
  }
}
