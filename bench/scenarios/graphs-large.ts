/**
 * graphs-large — the shapes of issue 17 with no-op handlers, one worker in this process
 * (concurrency 10), one enqueueGraph call per shape from an enqueue-only app:
 * 1 → 100,000 fan-out, 100,000 → 1 fan-in, a chain of 100,000, on every dialect; and on
 * PostgreSQL a 1,000,000-node graph (1,000 pipelines of 1,000), enqueued only.
 * Reports enqueue and end-to-end time, this process's RSS (after building the input, and its
 * peak while enqueueing), and for the fan-out the claim latency another worker sees while the
 * root's finalize promotes 100,000 dependents. Checks every job ran and every row is done.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dialect, GraphNode } from 'nestjs-sql-job-queue';
import { ChildWorker } from '../lib/child-worker';
import { checkRun, FailureLog } from '../lib/correctness';
import { withDatabase } from '../lib/databases';
import { ExecutionLog, wallNow } from '../lib/execution-log';
import { cell, num } from '../lib/format';
import { bootOurs, ourOptions, type OurApp } from '../lib/ours/our-app';
import { idRange, OurRows } from '../lib/ours/our-rows';
import type { ScenarioReport, Table } from '../lib/report';
import type { BenchContext, Scenario } from '../lib/scenario';
import { RunSeries } from '../lib/stats';
import { drainTimeout, waitUntilDrained } from '../lib/wait';

interface Shape {
  key: string;
  label: string;
  build(): GraphNode[];
  /** Enqueue only (the 1,000,000-node graph): nothing runs. */
  enqueueOnly?: boolean;
  /** Measure another worker's claim latency during the run. */
  probeClaims?: boolean;
  /** Report the time from this job's finish to that dependent's start (refs). */
  firstStart?: [upstream: string, dependent: string];
  dialects: readonly Dialect[];
}

const ALL: Dialect[] = ['postgres', 'mysql', 'sqlite'];

function fanOut(width: number): Shape {
  return {
    key: 'fanout',
    label: `1 → ${num(width)} fan-out`,
    dialects: ALL,
    probeClaims: true,
    // f0 has the lowest id of the dependents: the first one claimed once it is ready.
    firstStart: ['root', 'f0'],
    build: () => {
      const nodes: GraphNode[] = [{ ref: 'root', type: 'noop', args: {} }];
      for (let i = 0; i < width; i++) nodes.push({ ref: `f${i}`, type: 'noop', args: {}, dependsOn: ['root'] });
      return nodes;
    },
  };
}

function fanIn(width: number): Shape {
  return {
    key: 'fanin',
    label: `${num(width)} → 1 fan-in`,
    dialects: ALL,
    build: () => {
      const nodes: GraphNode[] = [];
      const refs: string[] = [];
      for (let i = 0; i < width; i++) {
        nodes.push({ ref: `u${i}`, type: 'noop', args: {} });
        refs.push(`u${i}`);
      }
      nodes.push({ ref: 'sink', type: 'noop', args: {}, dependsOn: refs });
      return nodes;
    },
  };
}

function pipelines(count: number, length: number, key: string, dialects: readonly Dialect[], enqueueOnly: boolean): Shape {
  return {
    key,
    label: count === 1 ? `chain of ${num(length)}` : `${num(count)} pipelines of ${num(length)}${enqueueOnly ? ' (enqueue only)' : ''}`,
    dialects,
    enqueueOnly,
    build: () => {
      const nodes: GraphNode[] = [];
      for (let c = 0; c < count; c++) {
        for (let i = 0; i < length; i++) nodes.push({ ref: `p${c}_${i}`, type: 'noop', args: {}, dependsOn: i ? [`p${c}_${i - 1}`] : [] });
      }
      return nodes;
    },
  };
}

function shapesFor(quick: boolean): Shape[] {
  const n = quick ? 10_000 : 100_000;
  return [
    fanOut(n),
    fanIn(n),
    // A chain is one finalize and one claim per step, in sequence: on MariaDB about 10 ms a step
    // here (two commits), so the full-size chain runs on the two others and MariaDB's at a tenth.
    ...(quick ? [pipelines(1, n, 'chain', ALL, false)] : [pipelines(1, n, 'chain', ['postgres', 'sqlite'], false), pipelines(1, n / 10, 'chain10k', ['mysql'], false)]),
    quick ? pipelines(100, 1_000, 'million', ['postgres'], true) : pipelines(1_000, 1_000, 'million', ['postgres'], true),
  ];
}

interface Measured {
  enqueueMs: number;
  e2eMs: number | null;
  rssInputMb: number;
  rssPeakMb: number;
  claimP50?: number;
  claimMax?: number;
  firstStartMs?: number;
  problems: string[];
}

export const graphsLarge: Scenario = {
  name: 'graphs-large',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    // GRAPHS_LARGE_SHAPES=fanout,fanin,chain,chain10k,million and GRAPHS_LARGE_DIALECTS=mysql,… narrow a run.
    const only = (name: string) => process.env[name]?.split(',').filter(Boolean);
    const wantShapes = only('GRAPHS_LARGE_SHAPES');
    const wantDialects = only('GRAPHS_LARGE_DIALECTS');
    const shapes = shapesFor(ctx.config.quick)
      .filter((s) => !wantShapes || wantShapes.includes(s.key))
      .map((s) => ({ ...s, dialects: s.dialects.filter((d) => !wantDialects || wantDialects.includes(d)) }))
      .filter((s) => s.dialects.length);
    const failures = new FailureLog();
    const series = new RunSeries();
    for (let run = 1; run <= ctx.config.runs; run++) {
      for (const shape of shapes) {
        for (const dialect of shape.dialects) {
          const what = `${dialect} ${shape.label} run ${run}/${ctx.config.runs}`;
          try {
            const r = await measure(dialect, shape);
            ctx.progress(
              `${what}: enqueue ${num(r.enqueueMs)} ms, end-to-end ${r.e2eMs === null ? '—' : `${num(r.e2eMs)} ms`}, RSS input ${num(r.rssInputMb)} MB → peak ${num(r.rssPeakMb)} MB` +
                (r.claimMax !== undefined ? `, other worker's claim p50 ${r.claimP50!.toFixed(1)} ms max ${r.claimMax.toFixed(1)} ms` : '') +
                (r.firstStartMs !== undefined ? `, first dependent started ${num(r.firstStartMs)} ms after the root finished` : '') +
                (r.problems.length ? ` FAILED: ${r.problems.join('; ')}` : ''),
            );
            if (r.problems.length) {
              failures.add(what, r.problems);
              continue;
            }
            const k = `${dialect}:${shape.key}`;
            series.add(`${k}:enq`, r.enqueueMs);
            if (r.e2eMs !== null) series.add(`${k}:e2e`, r.e2eMs);
            series.add(`${k}:rssIn`, r.rssInputMb);
            series.add(`${k}:rssPeak`, r.rssPeakMb);
            if (r.claimMax !== undefined) {
              series.add(`${k}:claimP50`, r.claimP50!);
              series.add(`${k}:claimMax`, r.claimMax);
            }
            if (r.firstStartMs !== undefined) series.add(`${k}:firstStart`, r.firstStartMs);
          } catch (err) {
            failures.add(what, [(err as Error).message]);
          }
        }
      }
    }
    return {
      name: this.name,
      description: 'The large DAG shapes of issue 17, per dialect: enqueue and end-to-end time, RSS, and claim latency during a 100,000-dependent promotion.',
      settings: [
        `one enqueueGraph call per graph from an enqueue-only app; an idle in-process worker app (concurrency 10, prefetch ${workerPrefetch()} (GRAPHS_LARGE_PREFETCH), poll 1000 ms, NOTIFY on PostgreSQL), other options default`,
        'RSS of the bench process (enqueuer + worker): "input" after building the node array, "peak" sampled every 10 ms while enqueueGraph runs',
        'claim latency: another worker process claims one ready job of another type every 20 ms during the fan-out run (SQLite: until the write lock is free); time from the call to holding the job',
        'correctness: every job executed, every row done',
      ],
      tables: [table(ctx, series, shapes)],
      failures: failures.entries,
    };
  },
};

async function measure(dialect: Dialect, shape: Shape): Promise<Measured> {
  return withDatabase(dialect, async (db) => {
    const enq = await bootOurs({ dialect, url: db.location, worker: false, externalTypes: ['noop', 'probe'] }, false);
    ExecutionLog.reset();
    const worker = shape.enqueueOnly ? null : await bootOurs(ourOptions(dialect, db.location, { prefetch: workerPrefetch() }));
    const prober = shape.probeClaims ? await ClaimProbe.start(dialect, db.location, enq) : null;
    try {
      const rows = new OurRows(await db.probe(), dialect);
      global.gc?.();
      const nodes = shape.build();
      const rssInput = process.memoryUsage().rss;
      let rssPeak = rssInput;
      const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 10);
      await sleep(300); // idle
      const t0 = wallNow();
      let out: Record<string, number>;
      try {
        out = await enq.queue.enqueueGraph(nodes);
      } finally {
        clearInterval(sampler);
        rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
      }
      const enqueueMs = wallNow() - t0;
      prober?.begin(); // from the end of the enqueue: the root runs and its finalize promotes the rest
      const mb = (b: number) => b / 1024 / 1024;
      if (shape.enqueueOnly) {
        const n = await rows.open(idRange(Object.values(out)));
        const problems = n === nodes.length ? [] : [`${n} rows open, expected ${nodes.length}`];
        return { enqueueMs, e2eMs: null, rssInputMb: mb(rssInput), rssPeakMb: mb(rssPeak), problems };
      }
      const ids = nodes.map((n) => out[n.ref]);
      const range = idRange(ids);
      const end = await waitUntilDrained({
        remaining: () => rows.open(range),
        total: ids.length,
        timeoutMs: drainTimeout(ids.length) * 3,
        ready: () => ExecutionLog.current.distinct >= ids.length,
        what: shape.label,
      });
      const claims = prober ? await prober.finish() : undefined;
      const firstStartMs = shape.firstStart ? await startAfterFinish(enq, out[shape.firstStart[0]], out[shape.firstStart[1]]) : undefined;
      const verdict = checkRun({ expectedIds: ids, executions: ExecutionLog.current.snapshot(), ...(await rows.finalization(range)) });
      return {
        enqueueMs,
        e2eMs: end - t0,
        rssInputMb: mb(rssInput),
        rssPeakMb: mb(rssPeak),
        claimP50: claims ? percentile(claims, 0.5) : undefined,
        claimMax: claims ? Math.max(...claims) : undefined,
        firstStartMs,
        problems: [...verdict.problems, ...(claims && !claims.length ? ['the other worker claimed nothing'] : [])],
      };
    } finally {
      await prober?.stop();
      await worker?.close();
      await enq.close();
    }
  });
}

/** Milliseconds from `upstream`'s finish to `dependent`'s start, by the database's clock. */
async function startAfterFinish(app: OurApp, upstream: number, dependent: number): Promise<number> {
  const [up, down] = await Promise.all([app.queue.get(upstream), app.queue.get(dependent)]);
  if (!up?.finishedAt || !down?.startedAt) throw new Error(`job ${upstream} or ${dependent} has no finish or start time`);
  return down.startedAt.getTime() - up.finishedAt.getTime();
}

/** Another worker, in a process of its own, claiming jobs of its own type in a loop (bench/workers/claim-probe-worker.ts). */
class ClaimProbe {
  private constructor(private readonly child: ChildWorker) {}

  static async start(dialect: Dialect, url: string, enq: OurApp): Promise<ClaimProbe> {
    await enq.queue.enqueueGraph(Array.from({ length: 5_000 }, (_, i) => ({ ref: `probe${i}`, type: 'probe', args: {} })));
    const { worker } = await ChildWorker.start('claim-probe-worker', { dialect, url, everyMs: 20 });
    return new ClaimProbe(worker);
  }

  begin(): void {
    this.child.send({ type: 'begin' });
  }

  async finish(): Promise<number[]> {
    const reply = this.child.next('samples', 120_000);
    this.child.send({ type: 'finish' });
    return (await reply).samples as number[];
  }

  async stop(): Promise<void> {
    await this.child.stop();
  }
}

/**
 * The worker's prefetch (`GRAPHS_LARGE_PREFETCH`, default 500): a 100,000-job drain at the
 * default prefetch of 10 is bounded by the claim round trips (about 8,000 jobs/s on PostgreSQL
 * here), not by the graph; a deployment that runs graphs of this size tunes for throughput.
 */
function workerPrefetch(): number {
  return Number(process.env.GRAPHS_LARGE_PREFETCH ?? 500);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

function table(ctx: BenchContext, series: RunSeries, shapes: Shape[]): Table {
  const rows: string[][] = [];
  for (const shape of shapes) {
    for (const dialect of shape.dialects) {
      const get = (m: string) => series.get(`${dialect}:${shape.key}:${m}`);
      const e2e = get('e2e');
      rows.push([
        dialect,
        shape.label,
        cell(get('enq')),
        shape.enqueueOnly ? '—' : e2e ? cell(e2e) : 'FAILED',
        cell(get('rssIn')),
        cell(get('rssPeak')),
        get('claimMax') ? `${cell(get('claimP50'))} / ${cell(get('claimMax'))}` : '—',
        get('firstStart') ? cell(get('firstStart')) : '—',
      ]);
    }
  }
  return {
    title: `Large DAG shapes — median (min–max) of ${ctx.config.runs} run(s)`,
    columns: ['Dialect', 'Shape', 'Enqueue ms', 'End-to-end ms', 'RSS after input MB', 'RSS peak in enqueue MB', "Other worker's claim p50 / max ms", 'Root done → first dependent started ms'],
    rows,
    notes: [
      'End-to-end = enqueueGraph call → database shows every job done (includes the enqueue).',
      'RSS is of the whole bench process (Node, Nest, both apps); the input column already holds the node array.',
      "Root done → first dependent started: the root's finished_at to the started_at of its lowest-id dependent, both the database's clock; the promotion of the other dependents goes on in slices after the root's commit.",
    ],
  };
}
