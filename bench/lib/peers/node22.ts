import type { PeerGraphNode, PeerKind, PeerWorkerOptions } from '../../workers/peer-worker';
import { ChildWorker, type ChildMessage } from '../child-worker';
import { warmUpJobs } from '../config';
import { withDatabase, type BenchDatabase } from '../databases';
import { ExecutionLog, mergeSnapshots, type ExecutionSnapshot } from '../execution-log';
import { node22Binary } from '../node22';
import type { Subject, SubjectFactory } from '../subject';

/**
 * A system that runs in one child process on the Node 22 binary (bench/workers/peer-worker.ts):
 * its enqueues, its worker and its own counts of open / finalized jobs all happen there, so every
 * system of the peers-node22 scenario (ours included) is measured on the same Node, the same way.
 * This process only times, polls `open` over IPC and collects the child's execution log.
 */
export interface Node22Settings {
  label: string;
  description: string;
  kind: PeerKind;
  settings?: Record<string, unknown>;
}

export const NODE22_SYSTEMS = {
  ours: {
    label: 'ours (defaults)',
    kind: 'ours',
    description: 'ours: nestjs-sql-job-queue, concurrency 10, prefetch 10, pollIntervalMs 1000, LISTEN/NOTIFY; an enqueue-only app in the same child',
  },
  oursFast: {
    label: 'ours (prefetch 500)',
    kind: 'ours',
    settings: { prefetch: 500 },
    description: 'ours (prefetch 500): the same with prefetch 500',
  },
  gwDefault: {
    label: 'graphile-worker 0.18 (defaults)',
    kind: 'gw18',
    description: 'graphile-worker 0.18.0 defaults: concurrency 10, no local queue, no completion batching, LISTEN/NOTIFY',
  },
  gwFast: {
    label: 'graphile-worker 0.18 (fast)',
    kind: 'gw18',
    settings: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 },
    description: 'graphile-worker 0.18.0 fastest documented settings: concurrency 10, localQueue { size: 500 }, completeJobBatchDelay 0, failJobBatchDelay 0',
  },
  boss12: {
    label: 'pg-boss 12',
    kind: 'boss12',
    settings: { localConcurrency: 10, batchSize: 50, pollingIntervalSeconds: 0.5, notifyPollingIntervalSeconds: 0.5, burstWhenBatchFull: true },
    description:
      'pg-boss 12.38.0: useListenNotify on, queue created with notify: true (LISTEN/NOTIFY wake-up), flowIntervalSeconds 1 (minimum; flows advance in this periodic pass); work() with localConcurrency 10 × batchSize 50, burstWhenBatchFull, pollingIntervalSeconds and notifyPollingIntervalSeconds 0.5 (the minimum; jobs a flow releases send no NOTIFY, so the 30 s default backstop would pace every DAG link), other options default',
  },
  bullmq: {
    label: 'BullMQ 6.7 (PostgreSQL)',
    kind: 'bullmq',
    settings: { concurrency: 10 },
    description: 'BullMQ 6.7.0 on its PostgreSQL backend (createPostgresBackend, migrate: true): one Worker, concurrency 10, other options default; completed jobs kept',
  },
} satisfies Record<string, Node22Settings>;

export class Node22Child {
  private constructor(readonly worker: ChildWorker) {}

  static async start(db: BenchDatabase, s: Node22Settings): Promise<Node22Child> {
    const node = node22Binary();
    if (!node) throw new Error('no Node ≥ 22.18: run npm ci --prefix bench/node22');
    // Ours runs on PostgreSQL or MariaDB here, the peers on PostgreSQL only.
    if (db.dialect === 'sqlite' || (s.kind !== 'ours' && db.dialect !== 'postgres')) throw new Error(`${s.label} cannot run on ${db.dialect} in a Node 22 child`);
    const options: PeerWorkerOptions = { kind: s.kind, url: db.location, settings: s.settings, dialect: db.dialect };
    const { worker } = await ChildWorker.start('peer-worker', options, [], 120_000, node.path);
    worker.on((m) => {
      if (m.type === 'tag') ExecutionLog.current.tagStarted(Number(m.tag), Number(m.at));
    });
    return new Node22Child(worker);
  }

  /**
   * Warms this child up before it is measured: an unrecorded run of `BENCH_WARMUP_JOBS` no-op
   * jobs on a database of its own, dropped afterwards (peer-worker.ts `warmUp`).
   */
  async warmUp(dialect: BenchDatabase['dialect']): Promise<void> {
    const count = warmUpJobs();
    if (count > 0) await withDatabase(dialect, (w) => this.call('warmUp', { url: w.location, count }));
  }

  call(type: string, args: Record<string, unknown> = {}, timeoutMs = 600_000): Promise<ChildMessage> {
    return this.worker.request({ type, ...args }, `${type}:done`, timeoutMs);
  }

  async graph(nodes: PeerGraphNode[]): Promise<Record<string, string>> {
    return (await this.call('graph', { nodes })).ids as Record<string, string>;
  }
}

/**
 * A Node 22 child system as a Subject for measureThroughput / measureLatency. With `processes`
 * > 1, the first child enqueues and counts; every child runs a worker (concurrency 10 each), and
 * executions, CPU and claim counts are summed over them.
 */
export function node22Subject(s: Node22Settings, processes = 1, claimTotals?: ClaimTotals): SubjectFactory {
  return (db: BenchDatabase): Subject => {
    let child: Node22Child | undefined;
    let others: Node22Child[] = [];
    const all = () => [child!, ...others];
    return {
      label: s.label,
      async prepare() {
        child = await Node22Child.start(db, s);
        // Spawned and warmed here, untimed, so that neither start-up nor a cold JIT is counted.
        others = await Promise.all(Array.from({ length: processes - 1 }, () => Node22Child.start(db, s)));
        await Promise.all(all().map((c) => c.warmUp(db.dialect)));
        await child.call('prepare');
      },
      async enqueue(count) {
        return (await child!.call('enqueue', { count })).ids as string[];
      },
      async enqueueOne(tag) {
        return String((await child!.call('enqueueOne', { tag })).id);
      },
      async startWorker() {
        await Promise.all(all().map((c) => c.call('start')));
      },
      open: async () => Number((await child!.call('open')).n),
      finalization: async () => {
        const m = await child!.call('finalization');
        return { finalized: Number(m.finalized), notFinalized: Number(m.notFinalized) };
      },
      async executions() {
        const reports = await Promise.all(all().map((c) => c.worker.request({ type: 'report' }, 'report')));
        if (claimTotals) {
          const counts = await Promise.all(all().map((c) => c.call('claims')));
          claimTotals.add(counts.reduce((n, m) => n + Number(m.claims ?? NaN), 0), counts.reduce((n, m) => n + Number(m.empty ?? NaN), 0));
        }
        return mergeSnapshots(reports.map((r) => r.snapshot as ExecutionSnapshot));
      },
      workerCpuUs: async () => (await Promise.all(all().map((c) => c.call('cpu')))).reduce((n, m) => n + Number(m.us), 0),
      async close() {
        await Promise.all(all().filter(Boolean).map((c) => c.worker.stop()));
        others = [];
      },
    };
  };
}

/** Claims and empty claims of the last run of a multi-process subject (ours only). */
export class ClaimTotals {
  readonly runs: Array<{ claims: number; empty: number }> = [];
  add(claims: number, empty: number): void {
    this.runs.push({ claims, empty });
  }
}
