/**
 * `node dist/bench/error-lines-read.js [dialect] [lines]`: the error history of a job with many log
 * lines (default 100,000, one in 1,000 an error line: a job of 100 attempts logging 1,000 lines
 * each), read with `getLogs(id, { level: 'error' })`, beside another job of as many lines. Lines
 * are written by SQL, not by handlers: this measures the read. Prints one JSON line: p50 and
 * max of 15 reads of the error page, and the first page of all lines for comparison.
 */
import 'reflect-metadata';
import type { Dialect } from 'nestjs-sql-job-queue';
import { withDatabase } from './lib/databases';
import { bootOurs } from './lib/ours/our-app';

async function main(): Promise<void> {
  const dialect = (process.argv[2] ?? 'postgres') as Dialect;
  const lines = Number(process.argv[3] ?? 100_000);
  if (!Number.isInteger(lines) || lines < 1_000) throw new Error(`lines must be an integer ≥ 1000, got ${process.argv[3]}`);
  await withDatabase(dialect, async (db) => {
    const app = await bootOurs({ dialect, url: db.location, worker: false, externalTypes: ['noop'] }, false);
    try {
      const later = new Date(Date.now() + 3_600_000);
      const [job, other] = [await app.queue.enqueue({ type: 'noop', runAfter: later }), await app.queue.enqueue({ type: 'noop', runAfter: later })];
      const probe = await db.probe();
      const now = dialect === 'postgres' ? 'now()' : `'2026-12-06 03:00:00.000'`;
      for (let start = 0; start < lines; start += 5_000) {
        const values: string[] = [];
        for (let i = start; i < Math.min(lines, start + 5_000); i++) {
          const error = i % 1_000 === 999;
          const attempt = Math.floor(i / 1_000) + 1;
          for (const id of [job.id, other.id]) values.push(`(${id}, ${attempt}, ${now}, '${error ? `Error: attempt ${attempt}` : `line ${i} ${'x'.repeat(60)}`}', '${error ? 'error' : 'info'}')`);
        }
        await probe.query(`INSERT INTO job_logs (job_id, attempt, logged_at, message, level) VALUES ${values.join(', ')}`);
      }
      if (dialect === 'postgres') await probe.query('ANALYZE job_logs');
      const times: number[] = [];
      for (let r = 0; r < 15; r++) {
        const started = performance.now();
        const page = await app.queue.getLogs(job.id, { level: 'error', limit: 100 });
        times.push(performance.now() - started);
        if (page.logs.length !== Math.min(100, Math.floor(lines / 1_000))) throw new Error(`read ${page.logs.length} error lines`);
      }
      times.sort((a, b) => a - b);
      const started = performance.now();
      await app.queue.getLogs(job.id, { limit: 100 });
      const round = (v: number) => Number(v.toFixed(2));
      console.log(JSON.stringify({ dialect, lines, errorPageMs: { p50: round(times[7]), max: round(times[14]) }, firstPageMs: round(performance.now() - started) }));
    } finally {
      await app.close();
    }
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
