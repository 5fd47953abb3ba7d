import { Inject, Injectable, Scope } from '@nestjs/common';
import { JOB_REF, JobHandler, JobRefOutsideJobError, type JobContext, type JobRef } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

const created = { handler: 0, audit: 0, transient: 0, singleton: 0 };
const seen: Array<{ jobId: number; refId: number; auditRefId: number; sameContext: boolean; instance: number }> = [];

/** A request-scoped dependency: one per job, sharing the job's DI sub-tree with the handler. */
@Injectable({ scope: Scope.REQUEST })
class JobAudit {
  readonly instance = ++created.audit;
  constructor(@Inject(JOB_REF) readonly job: JobRef) {}
}

@Injectable({ scope: Scope.REQUEST })
class ScopedJobs {
  readonly instance = ++created.handler;
  constructor(
    @Inject(JOB_REF) private readonly job: JobRef<'scoped'>,
    private readonly audit: JobAudit,
  ) {}

  @JobHandler('scoped')
  async run(args: { n: number }, ctx: JobContext): Promise<number> {
    seen.push({ jobId: ctx.id, refId: this.job.id, auditRefId: this.audit.job.id, sameContext: this.job.context === ctx, instance: this.instance });
    return (this.job.args as { n: number }).n + args.n;
  }
}

@Injectable({ scope: Scope.TRANSIENT })
class TransientJobs {
  readonly instance = ++created.transient;

  @JobHandler('transient')
  async run(): Promise<number> {
    return this.instance;
  }
}

@Injectable()
class SingletonJobs {
  readonly instance = ++created.singleton;

  @JobHandler('singleton')
  async run(): Promise<number> {
    return this.instance;
  }
}

describeDialects('job-scoped handler providers', (db) => {
  let app: QueueApp;
  beforeAll(async () => {
    app = await startQueueApp(db, { pollIntervalMs: 20, concurrency: 4 }, [ScopedJobs, JobAudit, TransientJobs, SingletonJobs]);
  });
  afterAll(() => app?.close());

  it('builds a fresh request-scoped handler (and its scoped dependencies) per job, with JOB_REF the current job', async () => {
    seen.length = 0;
    const before = created.handler;
    const jobs = await Promise.all(Array.from({ length: 20 }, (_, n) => app.queue.enqueue({ type: 'scoped', args: { n } })));
    for (const job of jobs) expect(await app.queue.waitFor(job.id, { timeoutMs: 20_000 })).toMatchObject({ state: 'done', result: 2 * job.args.n });
    expect(seen).toHaveLength(20);
    for (const s of seen) expect(s).toMatchObject({ refId: s.jobId, auditRefId: s.jobId, sameContext: true });
    expect(new Set(seen.map((s) => s.instance)).size).toBe(20);
    expect(created.handler - before).toBe(20);
  });

  it('builds a transient handler per job; a singleton stays one instance', async () => {
    const t = await Promise.all([1, 2, 3].map(() => app.queue.enqueue({ type: 'transient' })));
    const s = await Promise.all([1, 2, 3].map(() => app.queue.enqueue({ type: 'singleton' })));
    const tResults = await Promise.all(t.map(async (j) => (await app.queue.waitFor(j.id, { timeoutMs: 20_000 })).result));
    const sResults = await Promise.all(s.map(async (j) => (await app.queue.waitFor(j.id, { timeoutMs: 20_000 })).result));
    expect(new Set(tResults).size).toBe(3);
    expect(new Set(sResults).size).toBe(1);
  });

  it('refuses JOB_REF outside a job with an explained, typed error', async () => {
    const err = await app.module.resolve(JobAudit).catch((e) => e);
    expect(err).toBeInstanceOf(JobRefOutsideJobError);
    expect(err.message).toMatch(/JOB_REF was injected outside a job/);
  });
});
