import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { JobContext, JobHandler, JobQueueService } from 'nestjs-sql-job-queue';
import { fetchRef } from './report.graph';
import type { AggregateResult, FetchArgs, FetchResult, NotifyResult, ParseResult, RenderResult, TenantArgs } from './report.types';
import { EXPORT_READY_MS, EXPORT_SOURCE, FLAKY_SOURCE, sourceLatencyMs, sourceRows } from './source.simulator';

const RENDER_STAGES = ['layout', 'charts', 'tables', 'pdf'] as const;

/**
 * The report steps. Each waits with `ctx.signal`, so a cancel, a timeout or a shutdown stops it
 * at once; each is idempotent (same inputs, same result), since delivery is at least once.
 */
@Injectable()
export class ReportHandlers {
  constructor(private readonly queue: JobQueueService) {}

  @JobHandler('fetch', { maxAttempts: 3, timeoutMs: 5_000 })
  async fetch({ tenant, source }: FetchArgs, ctx: JobContext): Promise<FetchResult> {
    ctx.log(`calling the ${source} API for ${tenant} (attempt ${ctx.attempt} of ${ctx.maxAttempts})`);
    await sleep(sourceLatencyMs(source), undefined, { signal: ctx.signal });
    if (source === FLAKY_SOURCE && ctx.attempt === 1) {
      // Deterministic flakiness: the queue retries with backoff and the second attempt succeeds.
      throw new Error(`${source} API timed out (simulated; fails on the first attempt only)`);
    }
    // The export source answers its first request with "preparing, come back later". Not a
    // failure: snoozing runs the job again after the delay without spending one of its 3
    // attempts, and frees the worker slot meanwhile. The job's `snoozes` says which request this is.
    if (source === EXPORT_SOURCE && (await this.queue.get(ctx.id))?.snoozes === 0) {
      ctx.log(`${source} is preparing the export; snoozing ${EXPORT_READY_MS} ms`);
      return ctx.snooze(EXPORT_READY_MS);
    }
    const rows = sourceRows(tenant, source);
    ctx.log(`${source} answered ${rows.length} rows`); // read with GET /jobs/:id/logs, or on the dashboard's job page
    return { source, rows };
  }

  @JobHandler('parse')
  async parse({ source }: { source: string }, ctx: JobContext): Promise<ParseResult> {
    const upstream = await ctx.upstream<Record<string, FetchResult>>();
    const { rows } = upstream[fetchRef(source)];
    await sleep(100, undefined, { signal: ctx.signal });
    return { source, count: rows.length, total: rows.reduce((a, b) => a + b, 0) };
  }

  @JobHandler('aggregate')
  async aggregate({ tenant }: TenantArgs, ctx: JobContext): Promise<AggregateResult> {
    const upstream = await ctx.upstream<Record<string, ParseResult>>();
    // One entry per upstream, keyed by ref: every parse of this tenant.
    const parsed = Object.values(upstream);
    await sleep(100, undefined, { signal: ctx.signal });
    return {
      tenant,
      count: parsed.reduce((n, p) => n + p.count, 0),
      total: parsed.reduce((n, p) => n + p.total, 0),
      bySource: Object.fromEntries(parsed.map((p) => [p.source, p.total])),
    };
  }

  @JobHandler('render', { timeoutMs: 30_000 })
  async render({ tenant }: TenantArgs, ctx: JobContext): Promise<RenderResult> {
    const { aggregate } = await ctx.upstream<{ aggregate: AggregateResult }>();
    for (const [i, stage] of RENDER_STAGES.entries()) {
      await ctx.progress((i * 100) / RENDER_STAGES.length, stage);
      ctx.log(`rendering ${stage}`);
      await sleep(400, undefined, { signal: ctx.signal });
    }
    await ctx.progress(100, 'rendered');
    return { url: `/reports/${tenant}/${ctx.id}.pdf`, pages: 1 + Object.keys(aggregate.bySource).length, total: aggregate.total };
  }

  /** Rate-limited to 2 per second cluster-wide (`rateLimits` in sample.config.ts). */
  @JobHandler('notify')
  async notify({ tenant }: TenantArgs, ctx: JobContext): Promise<NotifyResult> {
    const { render } = await ctx.upstream<{ render: RenderResult }>();
    await sleep(100, undefined, { signal: ctx.signal });
    // A real notifier would send mail here, deduplicated by job id (delivery is at least once).
    return { to: `reports@${tenant}.example`, url: render.url, total: render.total };
  }
}
