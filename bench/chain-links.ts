/**
 * `node dist/bench/chain-links.js [links] [dialect]`: the time per link of one chain of no-op
 * jobs (default 3,000 on PostgreSQL), a link being the finalize that promotes the next job and the
 * claim that takes it. One worker in this process at the bench's defaults (concurrency 10), an
 * enqueue-only app that enqueues the chain with one enqueueGraph call; timed from that call to
 * the last link done (waitFor). Prints one JSON line: ms and this process's CPU ms per link.
 * Meant for before/after comparisons of the link path: run two builds alternately, several
 * times each, and compare medians; graphs-large's chain of 100,000 takes minutes per run.
 */
import 'reflect-metadata';
import type { Dialect, GraphNode } from 'nestjs-sql-job-queue';
import { withDatabase } from './lib/databases';
import { ExecutionLog } from './lib/execution-log';
import { bootEnqueuer, bootOurs, ourOptions } from './lib/ours/our-app';

async function main(): Promise<void> {
  const links = Number(process.argv[2] ?? 3_000);
  const dialect = (process.argv[3] ?? 'postgres') as Dialect;
  if (!Number.isInteger(links) || links < 2) throw new Error(`links must be an integer of at least 2, got ${process.argv[2]}`);
  await withDatabase(dialect, async (db) => {
    const enqueuer = await bootEnqueuer(dialect, db.location);
    const worker = await bootOurs(ourOptions(dialect, db.location));
    try {
      const nodes: GraphNode[] = Array.from({ length: links }, (_, i) => ({ ref: `l${i}`, type: 'noop', args: {}, ...(i ? { dependsOn: [`l${i - 1}`] } : {}) }));
      ExecutionLog.reset();
      const cpu = process.cpuUsage();
      const started = performance.now();
      const ids = await enqueuer.queue.enqueueGraph(nodes);
      const last = await enqueuer.queue.waitFor(ids[`l${links - 1}`], { timeoutMs: links * 100 });
      const ms = performance.now() - started;
      const used = process.cpuUsage(cpu);
      if (last.state !== 'done' || ExecutionLog.current.distinct !== links) {
        throw new Error(`the chain did not run once per link: last link ${last.state}, ${ExecutionLog.current.distinct} of ${links} ran`);
      }
      const perLink = (v: number) => Number((v / links).toFixed(3));
      process.stdout.write(`${JSON.stringify({ dialect, links, msPerLink: perLink(ms), cpuMsPerLink: perLink((used.user + used.system) / 1_000) })}\n`);
    } finally {
      await worker.close();
      await enqueuer.close();
    }
  });
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
