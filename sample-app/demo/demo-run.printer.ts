import { Injectable } from '@nestjs/common';
import type { JobState, QueueStats } from 'nestjs-sql-job-queue';
import type { AggregateResult, NotifyResult } from '../reports/report.types';
import type { PipelineSnapshot } from './demo-run.types';

const STATES: JobState[] = ['waiting', 'ready', 'running', 'done', 'failed', 'cancelled'];

/**
 * Formats the demo run for a terminal: short appended lines rather than an in-place redraw, so
 * the output also reads well when piped to a file or a CI log.
 */
@Injectable()
export class DemoRunPrinter {
  private write: (text: string) => void = (text) => process.stdout.write(text);

  /** Tests capture the output instead of printing it. */
  redirect(write: (text: string) => void): void {
    this.write = write;
  }

  start(pipelines: PipelineSnapshot[], weights: Record<string, number>): void {
    const who = pipelines.map((p) => `${p.tenant} (${p.steps.length} steps, weight ${weights[p.tenant] ?? 1})`).join(' and ');
    this.write(`\ndemo: report pipelines for ${who}\n`);
  }

  /** `  1.5s | wait 6 ready 2 run 4 done 6 | acme 4/10 render 50% charts | globex 2/8 fetch:web` */
  line(elapsedMs: number, pipelines: PipelineSnapshot[]): void {
    const steps = pipelines.flatMap((p) => p.steps);
    const counts = STATES.map((s) => [s, steps.filter((j) => stateOf(j.state) === s).length] as const)
      .filter(([s, n]) => n > 0 || s === 'running' || s === 'done')
      .map(([s, n]) => `${s} ${n}`)
      .join(' ');
    const tenants = pipelines.map((p) => `${p.tenant} ${tenantLine(p)}`).join(' | ');
    this.write(`${seconds(elapsedMs).padStart(6)} | ${counts} | ${tenants}\n`);
  }

  summary(elapsedMs: number, pipelines: PipelineSnapshot[], stats: QueueStats, port: number): void {
    this.write(`\ndemo finished in ${seconds(elapsedMs)}\n`);
    const start = Math.min(...pipelines.map((p) => p.report.createdAt.getTime()));
    for (const p of pipelines) {
      const byRef = new Map(p.steps.map((j) => [j.ref, j]));
      const agg = byRef.get('aggregate')?.result as AggregateResult | null;
      const sent = byRef.get('notify')?.result as NotifyResult | null;
      const took = p.report.finishedAt ? seconds(p.report.finishedAt.getTime() - start) : '-';
      const retried = p.steps.filter((j) => j.attempts > 1).map((j) => `${j.ref} took ${j.attempts} attempts`);
      const sums = agg ? Object.entries(agg.bySource).map(([s, n]) => `${s} ${n}`).join(', ') : '';
      this.write(
        `  ${p.tenant.padEnd(8)} ${p.report.state} at ${took}` +
          (agg ? `: total ${agg.total} over ${agg.count} rows (${sums})` : '') +
          (sent ? `, ${sent.url} sent to ${sent.to}` : '') +
          (retried.length ? `; ${retried.join(', ')}` : '') +
          '\n',
      );
    }
    const r = stats.recent;
    this.write(
      `  queue: ${STATES.map((s) => `${s} ${s === 'running' ? stats.running : stats.byState[s]}`).join(' ')}; last ${r.windowMs / 60_000} min: ` +
        `${r.done} done, ${r.failed} failed, mean ${r.meanDurationMs === null ? '-' : `${Math.round(r.meanDurationMs)} ms`} per job\n`,
    );
    this.write(
      `\ntry: curl -s localhost:${port}/stats\n` +
        `     curl -s -X POST localhost:${port}/pipelines -H 'content-type: application/json' -d '{"tenant":"initech"}'\n` +
        `     curl -s localhost:${port}/jobs/${pipelines[0]?.report.id ?? 1}\n\n`,
    );
  }
}

/** `4/10 fetch:billing retry 2, render 50% charts`: steps done, then what is in flight or retrying. */
function tenantLine(p: PipelineSnapshot): string {
  const done = p.steps.filter((j) => j.state === 'done').length;
  if (p.report.state !== 'waiting') return `${p.report.state} ${done}/${p.steps.length}`;
  const active = p.steps.flatMap((j) => {
    if (stateOf(j.state) === 'running') return [j.progress > 0 || j.currentStage ? `${j.ref} ${j.progress}% ${j.currentStage ?? ''}`.trim() : j.ref!];
    if (j.state === 'ready' && j.attempts > 0) return [`${j.ref} retry ${j.attempts + 1}`];
    return [];
  });
  return `${done}/${p.steps.length}${active.length ? ` ${active.join(', ')}` : ''}`;
}

/** A leased job is about to run: count it as running, as a user would. */
function stateOf(state: JobState): JobState {
  return state === 'leased' ? 'running' : state;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
