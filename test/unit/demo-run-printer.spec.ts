import type { JobView, QueueStats } from '../../lib';
import { DemoRunPrinter } from '../../sample-app/demo/demo-run.printer';

const view = (fields: Partial<JobView>): JobView => ({ attempts: 1, snoozes: 0, result: null, createdAt: new Date(0), finishedAt: null, ...fields }) as JobView;

describe('demo summary', () => {
  it("says why a retried step's first attempt failed, from its error history", () => {
    let out = '';
    const printer = new DemoRunPrinter();
    printer.redirect((text) => (out += text));
    const report = view({ id: 1, state: 'done', finishedAt: new Date(5_500) });
    const steps = [
      view({ id: 2, ref: 'fetch:billing', state: 'done', attempts: 2 }),
      view({ id: 3, ref: 'fetch:crm', state: 'done', attempts: 3 }),
      view({ id: 4, ref: 'fetch:support', state: 'done', snoozes: 1 }),
    ];
    const stats = { byState: {}, running: 0, recent: { windowMs: 300_000, done: 0, failed: 0, meanDurationMs: null } } as unknown as QueueStats;
    printer.summary(6_000, [{ tenant: 'acme', report, steps }], stats, 3000, [], new Map([[2, 'Error: billing API timed out']]));
    expect(out).toContain(
      'acme     done at 5.5s; fetch:billing took 2 attempts (attempt 1: Error: billing API timed out), fetch:crm took 3 attempts, fetch:support snoozed once (no attempt spent)',
    );
  });
});
