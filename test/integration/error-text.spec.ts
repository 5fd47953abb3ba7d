import { jest } from '@jest/globals';
import { Injectable, Logger } from '@nestjs/common';
import { JobHandler, OnJobEvent, type JobEventDetail, type JobView } from '../../lib';
import { JobLifecycle } from '../../lib/events/job-lifecycle';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';

const STORM = 200;
/** "Error: " (7) + 7,992 E's puts the emoji's high half at index 7,999: the last one kept. */
const SPLIT_PAIR = 'E'.repeat(7_992) + '😀 tail';

@Injectable()
class FailingHandlers {
  @JobHandler('nul-error', { maxAttempts: 1 })
  async nul(args: { n: number }): Promise<never> {
    throw new Error(`upstream answered \u0000\u0001 for job ${args.n}`); // e.g. a binary body quoted in a message
  }

  @JobHandler('odd-error', { maxAttempts: 1 })
  async odd(args: { kind: string }): Promise<never> {
    if (args.kind === 'split') throw new Error(SPLIT_PAIR);
    if (args.kind === 'lone') throw new Error('lone \ud800 here');
    throw new Error('M'.repeat(1024 * 1024));
  }
}

@Injectable()
class FailedListener {
  static heard = new Map<number, { error: string | undefined; lastError: string | null }>();
  @OnJobEvent('failed')
  onFailed(job: JobView, detail: JobEventDetail): void {
    FailedListener.heard.set(job.id, { error: detail.error, lastError: job.lastError });
  }
}

describeDialects('error texts a handler throws: NUL, unpaired surrogates, 1 MB', (db) => {
  let app: QueueApp;
  const refusals: string[] = [];

  beforeAll(async () => {
    for (const level of ['warn', 'error'] as const) {
      const original = Logger.prototype[level];
      jest.spyOn(Logger.prototype, level).mockImplementation(function (this: Logger, message: unknown, ...rest: unknown[]) {
        if (/refused/.test(String(message))) refusals.push(String(message));
        return original.call(this, message, ...(rest as []));
      });
    }
    app = await startQueueApp(db, { concurrency: 50, prefetch: 500, pollIntervalMs: 50 }, [FailingHandlers, FailedListener]);
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await app?.close();
  });

  const settled = () => app.count(`state NOT IN ('done', 'failed', 'cancelled')`).then((open) => open === 0);

  it(`${STORM} failures with a NUL in their message are recorded in their batches, the NUL as U+FFFD`, async () => {
    const ids = await app.queue.enqueueGraph(Array.from({ length: STORM }, (_, n) => ({ ref: `j${n}`, type: 'nul-error', args: { n } })));
    await eventually('every job failed', settled, 60_000 + STORM * 100);
    const rows = await app.rows(`SELECT id, state, last_error FROM jobs WHERE type = 'nul-error'`);
    expect(rows).toHaveLength(STORM);
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    const wrong = Object.entries(ids).filter(([ref, id]) => {
      const row = byId.get(id)!;
      return row.state !== 'failed' || !String(row.last_error).startsWith(`Error: upstream answered \ufffd\u0001 for job ${ref.slice(1)}\n`);
    });
    expect(wrong.slice(0, 3).map(([ref, id]) => `${ref}: ${JSON.stringify(byId.get(id))}`)).toEqual([]);
    // No batch was refused and split down to its jobs (PostgreSQL refuses NUL in text).
    expect(refusals).toEqual([]);
  });

  it('cuts a long text between characters, replaces an unpaired surrogate once, and tells listeners what it stored', async () => {
    const split = await app.queue.enqueue({ type: 'odd-error', args: { kind: 'split' } });
    const lone = await app.queue.enqueue({ type: 'odd-error', args: { kind: 'lone' } });
    const huge = await app.queue.enqueue({ type: 'odd-error', args: { kind: 'huge' } });
    await eventually('the three failed', settled, 60_000);
    await app.module.get(JobLifecycle).drain();

    const splitError = (await app.queue.get(split.id))!.lastError!;
    expect(splitError).toBe(`Error: ${'E'.repeat(7_992)}`);
    expect((await app.queue.get(lone.id))!.lastError).toMatch(/^Error: lone \ufffd here\n/);
    const hugeError = (await app.queue.get(huge.id))!.lastError!;
    expect(hugeError).toBe(`Error: ${'M'.repeat(7_993)}`);
    // The failed event's error is the stored text, not the 1 MB message.
    for (const id of [split.id, lone.id, huge.id]) {
      const heard = FailedListener.heard.get(id)!;
      expect(heard.error).toBe(heard.lastError);
    }
    expect(FailedListener.heard.get(huge.id)!.error).toHaveLength(8_000);
    expect(refusals).toEqual([]);
  });
});
