import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { JobQueueService, TERMINAL_STATES, type JobView } from 'nestjs-sql-job-queue';
import { SAMPLE_CONFIG } from '../config/sample-config.token';
import { TENANT_WEIGHTS, type SampleConfig } from '../config/sample.config';
import { PipelineService, type StartedPipeline } from '../reports/pipeline.service';
import { DEMO_LOAD_TYPE } from './demo-load.handlers';
import { DemoRunPrinter } from './demo-run.printer';
import { slotShares } from './slot-shares';
import type { PipelineSnapshot } from './demo-run.types';

/**
 * Two tenants with weights 3 and 1; only acme asks the flaky billing source. Each tenant first gets
 * LOAD_PER_TENANT short jobs, so both have more ready work than the four workers for a while:
 * acme then gets three slots to globex's one, and the summary shows the measured shares.
 */
const DEMO = [
  { tenant: 'acme', sources: ['crm', 'billing', 'support', 'web'] },
  { tenant: 'globex', sources: ['crm', 'support', 'web', 'ads'] },
];
const REFRESH_MS = 500;
const LOAD_PER_TENANT = 24;

/**
 * The on-start demo: enqueues one report pipeline per demo tenant, then polls the jobs and prints
 * a line every REFRESH_MS until both containers finish, then a summary. HTTP keeps serving.
 */
@Injectable()
export class DemoRunService implements OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly queue: JobQueueService,
    private readonly pipelines: PipelineService,
    private readonly printer: DemoRunPrinter,
    @Inject(SAMPLE_CONFIG) private readonly config: SampleConfig,
  ) {}

  /** Resolves when the demo pipelines have finished (or the app shuts down first). */
  async run(): Promise<PipelineSnapshot[]> {
    const started = Date.now();
    const load = await Promise.all(
      DEMO.map(({ tenant }) =>
        this.queue.enqueueGraph(Array.from({ length: LOAD_PER_TENANT }, (_, n) => ({ ref: `load${n}`, type: DEMO_LOAD_TYPE, args: { n }, group: tenant }))),
      ),
    );
    const runs = await Promise.all(DEMO.map((d) => this.pipelines.start(d)));
    let snapshot = await this.snapshot(runs);
    this.printer.start(snapshot, TENANT_WEIGHTS);
    // A chain of timeouts, not an interval: a slow database never gets overlapping polls.
    while (!this.stopped && !snapshot.every((p) => TERMINAL_STATES.includes(p.report.state))) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, REFRESH_MS);
      });
      if (this.stopped) break;
      snapshot = await this.snapshot(runs);
      this.printer.line(Date.now() - started, snapshot, (await this.queue.stats()).groups);
    }
    if (!this.stopped) {
      const loadJobs = await this.jobs(load.flatMap((ids) => Object.values(ids)));
      const shares = slotShares(loadJobs, [...loadJobs, ...snapshot.flatMap((p) => p.steps)], TENANT_WEIGHTS);
      this.printer.summary(Date.now() - started, snapshot, await this.queue.stats(), this.config.port, shares, await this.firstErrors(snapshot));
    }
    return snapshot;
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.wake?.(); // let run() return instead of hanging on a cleared timer
  }

  /** Why each retried step's first attempt failed: the first line of its log's error history. */
  private async firstErrors(snapshot: PipelineSnapshot[]): Promise<Map<number, string>> {
    const retried = snapshot.flatMap((p) => p.steps).filter((j) => j.attempts > 1);
    const out = new Map<number, string>();
    for (const job of retried) {
      const [first] = (await this.queue.getLogs(job.id, { level: 'error', limit: 1 })).logs;
      if (first) out.set(job.id, first.message.split('\n')[0]);
    }
    return out;
  }

  private async jobs(ids: number[]): Promise<JobView[]> {
    return (await Promise.all(ids.map((id) => this.queue.get(id)))).filter((j): j is JobView => j !== null);
  }

  private async snapshot(runs: StartedPipeline[]): Promise<PipelineSnapshot[]> {
    return Promise.all(
      runs.map(async (run) => {
        const jobs = await Promise.all(Object.values(run.jobs).map((id) => this.queue.get(id)));
        const present = jobs.filter((j): j is JobView => j !== null);
        return {
          tenant: run.tenant,
          report: present.find((j) => j.id === run.reportId)!,
          steps: present.filter((j) => j.id !== run.reportId),
        };
      }),
    );
  }
}
