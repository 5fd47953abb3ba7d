import { Injectable } from '@nestjs/common';
import type { JobState, QueueStats } from 'nestjs-sql-job-queue';
import type { AggregateResult, NotifyResult } from '../reports/report.types';
import type { PipelineSnapshot } from './demo-run.types';
import type { SlotShare } from './slot-shares';

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
    this.write(`\ndemo: report pipelines for ${who}, after a burst of short jobs for each\n`);
    this.write(
      'look at the "slots" column (jobs each tenant holds, its burst included: running, or finished with the result not yet written, which frees the worker slot at once, so a line may add up to more than 4; the counts after it are the pipelines\' steps): fair share splits the 4 worker slots by weight while both tenants have jobs ready to run (3 for acme to 1 for globex); ' +
        'once one has fewer ready jobs than its share (its steps wait for upstreams or a retry), the other takes the free slots, so 1 to 3 is fair too. ' +
        'The summary measures the shares. Which pipeline finishes first also depends on its length and retries, not on weight alone.\n',
    );
  }

  /** `  1.5s | slots acme 3 globex 1 | wait 6 ready 2 run 4 done 6 | acme 4/10 render 50% charts | globex 2/8 fetch:web` */
  line(elapsedMs: number, pipelines: PipelineSnapshot[], groups: QueueStats['groups'] = []): void {
    const steps = pipelines.flatMap((p) => p.steps);
    const counts = STATES.map((s) => [s, steps.filter((j) => stateOf(j.state) === s).length] as const)
      .filter(([s, n]) => n > 0 || s === 'running' || s === 'done')
      .map(([s, n]) => `${s} ${n}`)
      .join(' ');
    const tenants = pipelines.map((p) => `${p.tenant} ${tenantLine(p)}`).join(' | ');
    // Slots each tenant holds right now, every job of its group counted (the demo load too).
    const slots = pipelines.map((p) => `${p.tenant} ${groups.find((g) => g.group === p.tenant)?.running ?? 0}`).join(' ');
    this.write(`${seconds(elapsedMs).padStart(6)} | slots ${slots} | ${counts} | ${tenants}\n`);
  }

  /** `firstErrors`: per retried step's id, the error its first attempt failed with (its log's first `error` line). */
  summary(elapsedMs: number, pipelines: PipelineSnapshot[], stats: QueueStats, port: number, shares: SlotShare[] = [], firstErrors = new Map<number, string>()): void {
    this.write(`\ndemo finished in ${seconds(elapsedMs)}\n`);
    if (shares.length) {
      const measured = shares.map((s) => `${s.tenant} ${s.started} (${percent(s.share)})`).join(', ');
      const expected = shares.map((s) => `${s.tenant} ${percent(s.expected)}`).join(', ');
      this.write(`  fair share: jobs started while both tenants had work waiting: ${measured}; weights ${shares.map((s) => s.weight).join(':')} → ${expected}\n`);
    }
    const start = Math.min(...pipelines.map((p) => p.report.createdAt.getTime()));
    for (const p of pipelines) {
      const byRef = new Map(p.steps.map((j) => [j.ref, j]));
      const agg = byRef.get('aggregate')?.result as AggregateResult | null;
      const sent = byRef.get('notify')?.result as NotifyResult | null;
      const took = p.report.finishedAt ? seconds(p.report.finishedAt.getTime() - start) : '-';
      const retried = p.steps.flatMap((j) => [
        ...(j.attempts > 1 ? [`${j.ref} took ${j.attempts} attempts${firstErrors.has(j.id) ? ` (attempt 1: ${firstErrors.get(j.id)})` : ''}`] : []),
        ...(j.snoozes > 0 ? [`${j.ref} snoozed ${j.snoozes === 1 ? 'once' : `${j.snoozes} times`} (no attempt spent)`] : []),
      ]);
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
    // The dashboard's URL scrolled away behind the live view: repeat it next to the operator calls.
    const retried = pipelines.flatMap((p) => p.steps).find((j) => j.attempts > 1);
    this.write(
      `\nopen http://localhost:${port}/dashboard (the jobs, their graphs and the schedules), or try:\n` +
        `     curl -s localhost:${port}/stats\n` +
        `     curl -s -X POST localhost:${port}/pipelines -H 'content-type: application/json' -d '{"tenant":"initech"}'\n` +
        `     curl -s localhost:${port}/jobs/${pipelines[0]?.report.id ?? 1}\n` +
        (retried ? `     curl -s localhost:${port}/jobs/${retried.id}/logs   # what ${retried.ref} logged (ctx.log) over its ${retried.attempts} attempts, and why attempt 1 failed\n` : '') +
        `     curl -s 'localhost:${port}/jobs?type=render&group=acme&limit=5'\n` +
        `     curl -s -X POST localhost:${port}/pause -H 'content-type: application/json' -d '{"type":"render"}'   # then the same to /resume\n\n`,
    );
  }
}

/** `4/10 fetch:billing retry 2, fetch:support snoozed, render 50% charts`: steps done, then what is in flight, retrying or snoozed. */
function tenantLine(p: PipelineSnapshot): string {
  const done = p.steps.filter((j) => j.state === 'done').length;
  if (p.report.state !== 'waiting') return `${p.report.state} ${done}/${p.steps.length}`;
  const active = p.steps.flatMap((j) => {
    if (stateOf(j.state) === 'running') return [j.progress > 0 || j.currentStage ? `${j.ref} ${j.progress}% ${j.currentStage ?? ''}`.trim() : j.ref!];
    if (j.state === 'ready' && j.attempts > 0) return [`${j.ref} retry ${j.attempts + 1}`];
    if (j.state === 'ready' && j.snoozes > 0) return [`${j.ref} snoozed`];
    return [];
  });
  return `${done}/${p.steps.length}${active.length ? ` ${active.join(', ')}` : ''}`;
}

/** A leased job is about to run: count it as running, as a user would. */
function stateOf(state: JobState): JobState {
  return state === 'leased' ? 'running' : state;
}

function percent(x: number): string {
  return `${Math.round(x * 100)}%`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
