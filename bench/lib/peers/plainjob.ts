import Database from 'better-sqlite3';
import { better, defineQueue, defineWorker, type Queue, type Worker } from 'plainjob';
import { ChildWorker } from '../child-worker';
import type { BenchDatabase, Probe } from '../databases';
import { ExecutionLog, mergeSnapshots, type ExecutionSnapshot } from '../execution-log';
import type { Subject, SubjectFactory } from '../subject';

/**
 * plainjob 0.0.14 (SQLite, better-sqlite3). One `defineWorker` runs one job at a time, so a
 * process with concurrency N defines N workers on one queue. Its `queue.add` does not wake
 * workers: an idle worker polls every `pollIntervall` ms.
 */
export const PLAINJOB_WORKERS_PER_PROCESS = 10;

const silent = { error: (m: string) => console.error(`[plainjob] ${m}`), warn: () => {}, info: () => {}, debug: () => {} };

export function openPlainjobQueue(file: string): { queue: Queue; close(): void } {
  const queue = defineQueue({ connection: better(new Database(file)), logger: silent });
  return { queue, close: () => queue.close() };
}

/** Enqueues `count` jobs with `addMany` in chunks (one transaction per chunk); returns their ids. */
export function enqueuePlainjob(queue: Queue, count: number, chunk = 1_000): number[] {
  const ids: number[] = [];
  for (let start = 0; start < count; start += chunk) {
    const data = Array.from({ length: Math.min(chunk, count - start) }, () => ({}));
    ids.push(...queue.addMany('noop', data).ids);
  }
  return ids;
}

/** Starts `workers` plainjob workers on one queue, recording executions in this process's log. */
export function startPlainjobWorkers(queue: Queue, workers: number, pollIntervall: number): { stop(): Promise<void> } {
  const list: Worker[] = [];
  for (let i = 0; i < workers; i++) {
    const w = defineWorker(
      'noop',
      async (job) => {
        const data = JSON.parse(job.data) as { tag?: number } | null;
        ExecutionLog.current.record(job.id, data?.tag);
      },
      { queue, pollIntervall, logger: silent },
    );
    void w.start();
    list.push(w);
  }
  return { stop: async () => void (await Promise.all(list.map((w) => w.stop()))) };
}

/** plainjob status codes: 0 pending, 1 processing, 2 done, 3 failed. */
export const PLAINJOB_OPEN = `SELECT COUNT(*) AS n FROM plainjob_jobs WHERE status IN (0, 1)`;
export const PLAINJOB_DONE = `SELECT COUNT(*) AS n FROM plainjob_jobs WHERE status = 2`;
export const PLAINJOB_NOT_DONE = `SELECT COUNT(*) AS n FROM plainjob_jobs WHERE status <> 2`;

export interface PlainjobSubjectOptions {
  label: string;
  /** 0: workers in this process; n ≥ 1: n processes (bench/workers/plainjob-worker). */
  processes: number;
  pollIntervall: number;
}

/** plainjob as a Subject: `addMany` / `add` from this process, workers here or in child processes. */
export function plainjobSubject(o: PlainjobSubjectOptions): SubjectFactory {
  return (db: BenchDatabase): Subject => {
    let local: { queue: Queue; close(): void } | undefined;
    let workers: { stop(): Promise<void> } | undefined;
    let children: ChildWorker[] = [];
    let probe: Probe | undefined;
    return {
      label: o.label,
      async prepare() {
        local = openPlainjobQueue(db.location); // creates the tables
        probe = await db.probe();
      },
      enqueue: async (count) => enqueuePlainjob(local!.queue, count),
      enqueueOne: async (tag) => local!.queue.add('noop', { tag }).id,
      async startWorker() {
        if (o.processes === 0) {
          workers = startPlainjobWorkers(local!.queue, PLAINJOB_WORKERS_PER_PROCESS, o.pollIntervall);
          return;
        }
        const options = { file: db.location, workers: PLAINJOB_WORKERS_PER_PROCESS, pollIntervall: o.pollIntervall };
        children = (await Promise.all(Array.from({ length: o.processes }, () => ChildWorker.start('plainjob-worker', options)))).map((c) => c.worker);
      },
      open: () => probe!.scalar(PLAINJOB_OPEN),
      async finalization() {
        return { finalized: await probe!.scalar(PLAINJOB_DONE), notFinalized: await probe!.scalar(PLAINJOB_NOT_DONE) };
      },
      async executions() {
        if (!children.length) return ExecutionLog.current.snapshot();
        const reports = await Promise.all(children.map((c) => c.request({ type: 'report' }, 'report')));
        return mergeSnapshots(reports.map((r) => r.snapshot as ExecutionSnapshot));
      },
      allStarted: o.processes === 0 ? (expected) => ExecutionLog.current.distinct >= expected : undefined,
      async close() {
        await Promise.all(children.map((c) => c.stop()));
        await workers?.stop();
        local?.close();
      },
    };
  };
}
