import { EventEmitter } from 'node:events';
import type { ClaimedJob } from '../../lib/claim/claimed-job';
import { sqlDialect } from '../../lib/database/dialects';
import type { JobQueueDatabase } from '../../lib/database/job-queue.database';
import type { Sql } from '../../lib/database/sql';
import { JobLifecycle } from '../../lib/events/job-lifecycle';
import type { JobQueueEvents } from '../../lib/events/job-queue.events';
import type { JobSignal, JobSignalSink } from '../../lib/events/job-signal';

const job = (id: number): ClaimedJob => ({ id, type: 'noop', args: null, attempts: 1, maxAttempts: 3, group: 'default', priority: 0, parentId: null, timeoutMs: null });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('JobLifecycle view reads', () => {
  it('a sink that needs views: each read waits 25 ms after the previous one for more reports, not one read per few jobs back to back', async () => {
    // Each view read takes 3 ms, as a round trip would; jobs keep completing meanwhile.
    const dialect = sqlDialect('sqlite');
    const reads: Array<{ ids: number[]; start: number; end: number }> = [];
    const db = {
      dialect,
      async run(statement: Sql) {
        const read = { ids: statement.render('sqlite').params.map(Number), start: Date.now(), end: 0 };
        reads.push(read);
        await sleep(3);
        read.end = Date.now();
        const at = '2026-01-01 00:00:00.000';
        const rows = read.ids.map((id) => ({ id, type: 'noop', args: 'null', state: 'done', attempts: 1, max_attempts: 3, progress: 100, group_key: 'default',
          weight: 1, priority: 0, is_container: 0, run_after: at, created_at: at, updated_at: at }));
        return { rows };
      },
    };
    const delivered: JobSignal[] = [];
    const sink: JobSignalSink = { needsView: (e) => e === 'completed', needsType: () => false, deliver: (s) => delivered.push(...s) };
    const lifecycle = new JobLifecycle(db as unknown as JobQueueDatabase, new EventEmitter() as JobQueueEvents);
    lifecycle.addSink(sink);
    const first = Date.now();
    let n = 0;
    while (reads.length < 4 && Date.now() - first < 20_000) {
      const j = job(++n);
      lifecycle.started(j, Date.now());
      lifecycle.attemptEnded(j, 'done', 1);
      await new Promise((r) => setImmediate(r));
    }
    await lifecycle.drain();
    expect(reads.length).toBeGreaterThanOrEqual(4);
    // Timers never fire early (1 ms of clock rounding allowed).
    expect(reads[0].start - first).toBeGreaterThanOrEqual(24);
    // A batch is read in slices, back to back (64 ids before any view was weighed, then up to
    // 1,000, the bind limits' chunk, as many as make ~8 MB): the wait is between batches, so a
    // read that follows a full slice belongs to its batch.
    for (let i = 1; i < reads.length; i++) {
      if (reads[i - 1].ids.length === 64 || reads[i - 1].ids.length === 1_000) continue;
      expect(reads[i].start - reads[i - 1].end).toBeGreaterThanOrEqual(24);
    }
    // Every event delivered once, in report order, each completion with its view; every job read once.
    expect(delivered.map((s) => `${s.event}:${s.id}`)).toEqual(Array.from({ length: n }, (_, i) => [`started:${i + 1}`, `completed:${i + 1}`]).flat());
    expect(delivered.filter((s) => s.event === 'completed').every((s) => s.view?.id === s.id)).toBe(true);
    expect(reads.flatMap((r) => r.ids).sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
  });
});
