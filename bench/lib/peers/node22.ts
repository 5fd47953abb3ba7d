import type { PeerGraphNode, PeerKind, PeerWorkerOptions } from '../../workers/peer-worker';
import { ChildWorker, type ChildMessage } from '../child-worker';
import type { BenchDatabase } from '../databases';
import { ExecutionLog, type ExecutionSnapshot } from '../execution-log';
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
    const options: PeerWorkerOptions = { kind: s.kind, url: db.location, settings: s.settings };
    const { worker } = await ChildWorker.start('peer-worker', options, [], 120_000, node.path);
    worker.on((m) => {
      if (m.type === 'tag') ExecutionLog.current.tagStarted(Number(m.tag), Number(m.at));
    });
    return new Node22Child(worker);
  }

  call(type: string, args: Record<string, unknown> = {}, timeoutMs = 600_000): Promise<ChildMessage> {
    return this.worker.request({ type, ...args }, `${type}:done`, timeoutMs);
  }

  async graph(nodes: PeerGraphNode[]): Promise<Record<string, string>> {
    return (await this.call('graph', { nodes })).ids as Record<string, string>;
  }
}

/** A Node 22 child system as a Subject for measureThroughput / measureLatency. */
export function node22Subject(s: Node22Settings): SubjectFactory {
  return (db: BenchDatabase): Subject => {
    let child: Node22Child | undefined;
    return {
      label: s.label,
      async prepare() {
        child = await Node22Child.start(db, s);
        await child.call('prepare');
      },
      async enqueue(count) {
        return (await child!.call('enqueue', { count })).ids as string[];
      },
      async enqueueOne(tag) {
        return String((await child!.call('enqueueOne', { tag })).id);
      },
      startWorker: async () => void (await child!.call('start')),
      open: async () => Number((await child!.call('open')).n),
      finalization: async () => {
        const m = await child!.call('finalization');
        return { finalized: Number(m.finalized), notFinalized: Number(m.notFinalized) };
      },
      executions: async () => (await child!.worker.request({ type: 'report' }, 'report')).snapshot as ExecutionSnapshot,
      workerCpuUs: async () => Number((await child!.call('cpu')).us),
      close: async () => child?.worker.stop(),
    };
  };
}
