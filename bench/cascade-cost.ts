/**
 * `node dist/bench/cascade-cost.js [dialect] [width]`: the failure cascade's cost at size. A root
 * with `width` dependents (default 100,000), held back by `runAfter`, is cancelled (the root and
 * every dependent in one cascade), then retried (every one of them reopened). No worker runs.
 * Prints one JSON line: both calls' wall times and the jobs they touched. Built to compare a
 * build with the one before it (alternate the two, medians of 3): see allowFailure in the README.
 */
import 'reflect-metadata';
import type { Dialect, GraphNode } from 'nestjs-sql-job-queue';
import { withDatabase } from './lib/databases';
import { bootOurs } from './lib/ours/our-app';

async function main(): Promise<void> {
  const dialect = (process.argv[2] ?? 'postgres') as Dialect;
  const width = Number(process.argv[3] ?? 100_000);
  if (!Number.isInteger(width) || width < 1) throw new Error(`width must be a positive integer, got ${process.argv[3]}`);
  await withDatabase(dialect, async (db) => {
    const app = await bootOurs({ dialect, url: db.location, worker: false, externalTypes: ['noop'] }, false);
    try {
      const nodes: GraphNode[] = [{ ref: 'root', type: 'noop', runAfter: new Date(Date.now() + 3_600_000) }];
      for (let i = 0; i < width; i++) nodes.push({ ref: `m${i}`, type: 'noop', dependsOn: ['root'] });
      const ids = await app.queue.enqueueGraph(nodes);
      let started = performance.now();
      await app.queue.cancel(ids.root);
      const cancelMs = Math.round(performance.now() - started);
      const cancelled = (await app.queue.stats()).byState.cancelled;
      started = performance.now();
      await app.queue.retry(ids.root);
      const retryMs = Math.round(performance.now() - started);
      const waiting = (await app.queue.stats()).byState.waiting;
      if (cancelled !== width + 1 || waiting !== width) throw new Error(`cancelled ${cancelled}, then ${waiting} waiting, of ${width + 1}`);
      console.log(JSON.stringify({ dialect, width, cancelMs, retryMs }));
    } finally {
      await app.close();
    }
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
