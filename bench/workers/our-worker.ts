import type { JobQueueModuleOptions } from 'nestjs-sql-job-queue';
import { ExecutionLog } from '../lib/execution-log';
import { bootOurs } from '../lib/ours/our-app';
import { childOptions, memory, runChild, send, serveParent } from './worker-ipc';

/** A worker process of ours: boots the module with the no-op handler and serves the parent. */
interface OurWorkerOptions {
  module: JobQueueModuleOptions;
  rssSampleMs?: number;
}

runChild(async () => {
  const options = childOptions<OurWorkerOptions>();
  ExecutionLog.current.useDenseIds(); // ours has integer ids; keeps the log out of the measured heap
  const before = memory();
  const app = await bootOurs(options.module, true);
  serveParent(() => app.close(), options.rssSampleMs);
  send({ type: 'ready', pid: process.pid, beforeBoot: before, ...memory() });
});
