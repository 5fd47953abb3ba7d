import { afterAll, afterEach, beforeAll, beforeEach } from '@jest/globals';
import { clearProbes, installProbes } from './probe-tables';
import { resetTables, startQueueApp, type QueueApp } from './queue-app';
import type { TestDatabase } from './test-databases';
import type { WorkerProcess } from './worker-process';

/**
 * The set-up of the specs that drive worker processes from an enqueue-only app: the app (worker
 * off, the types the workers handle accepted) with the probe tables, empty tables and probes
 * before each test, the test's workers killed after it and every worker and the app at the end.
 * `started` receives the app; `reset` adds to the per-test reset (e.g. resuming what a test paused).
 */
export function probedEnqueuer(
  db: TestDatabase,
  options: { externalTypes: string[]; workers: WorkerProcess[]; started: (app: QueueApp) => void; reset?: (app: QueueApp) => Promise<void> },
): void {
  let app: QueueApp | undefined;
  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: options.externalTypes });
    options.started(app);
    await installProbes(app);
  });
  afterAll(async () => {
    options.workers.forEach((w) => w.kill());
    await app?.close();
  });
  beforeEach(async () => {
    await resetTables(app!);
    await clearProbes(app!);
    await options.reset?.(app!);
  });
  afterEach(() => options.workers.splice(0).forEach((w) => w.kill()));
}
