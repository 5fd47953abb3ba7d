import { setTimeout as sleep } from 'node:timers/promises';
import type { Dialect } from 'nestjs-sql-job-queue';
import { bootOurs } from '../lib/ours/our-app';
import { childOptions, runChild, send, serveParent } from './worker-ipc';

/**
 * Another worker, in its own process (so the bench process's event loop never inflates its
 * figures): on `begin`, claims one ready `probe` job every `everyMs` and times each claim until
 * it holds a job (SQLite: until the write lock is free); on `finish`, answers with the samples.
 */
interface ProbeOptions {
  dialect: Dialect;
  url: string;
  everyMs: number;
}

runChild(async () => {
  const options = childOptions<ProbeOptions>();
  const app = await bootOurs({ dialect: options.dialect, url: options.url, worker: false, externalTypes: ['probe'] }, false);
  let running = false;
  let loop: Promise<void> | undefined;
  const samples: number[] = [];
  process.on('message', (m: { type: string }) => {
    if (m.type === 'begin') {
      running = true;
      loop = (async () => {
        while (running) {
          const t0 = performance.now();
          for (;;) {
            const got = await app.claims.claim({ owner: 'probe', types: ['probe'], quotas: [{ limit: 1 }], leaseTtlMs: 600_000, start: true });
            if (got.length || !running) break;
            await sleep(1);
          }
          samples.push(performance.now() - t0);
          await sleep(options.everyMs);
        }
      })();
    } else if (m.type === 'finish') {
      running = false;
      void loop?.then(() => send({ type: 'samples', samples }));
    }
  });
  serveParent(() => app.close());
  send({ type: 'ready', pid: process.pid });
});
