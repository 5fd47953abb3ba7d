/**
 * One queue system in its own process, run on the Node 22 binary by bench/lib/peers/node22.ts:
 * ours, graphile-worker 0.18, pg-boss 12 or BullMQ 6.7 on PostgreSQL. graphile-worker 0.18 and
 * pg-boss 12 are ESM-only and need Node ≥ 22.12, where `require()` of an ES module works, so this
 * CommonJS file loads them with plain `require` (under their npm aliases). Ours runs here too, on the
 * same Node, so every row of the peers-node22 tables is measured the same way.
 *
 * The parent drives it over IPC: `warmUp` {url, count}, `prepare`, `enqueue` {count}, `enqueueOne` {tag}, `start`,
 * `open`, `finalization`, `graph` {nodes}, `order` (dependency check of the last graph), `cpu`,
 * `report`, `stop`. Each request is answered with `<type>:done` (or `error`). A tagged job's start
 * time is pushed as `tag` {tag, at} (the wall clock, comparable across processes).
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import { ExecutionLog } from '../lib/execution-log';
import { drainTimeout, waitUntilDrained } from '../lib/wait';
import { childOptions, runChild, send, serveParent } from './worker-ipc';

export type PeerKind = 'ours' | 'gw18' | 'boss12' | 'bullmq';

export interface PeerWorkerOptions {
  kind: PeerKind;
  url: string;
  /** Ours only: the database at `url` (the peers run on PostgreSQL alone). Default postgres. */
  dialect?: 'postgres' | 'mysql';
  /** Kind-specific settings (graphile preset.worker, our module options, pg-boss work options, BullMQ worker options). */
  settings?: Record<string, unknown>;
}

export interface PeerGraphNode {
  ref: string;
  dependsOn?: string[];
}

interface System {
  /** Claim statements run and how many came back empty (ours only; graphile-worker does not expose them). */
  claims?(): { claims: number; empty: number };
  prepare(): Promise<void>;
  enqueue(count: number): Promise<string[]>;
  enqueueOne(tag: number): Promise<string>;
  start(): Promise<void>;
  open(): Promise<number>;
  finalization(): Promise<{ finalized: number; notFinalized: number }>;
  /** The whole graph in one call of the system's DAG API; ref → job id. */
  graph(nodes: PeerGraphNode[]): Promise<Record<string, string>>;
  close(): Promise<void>;
}

const QUEUE = 'noop';
type Loose = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- ESM-only peers, loaded by require() on Node 22

function record(id: string | number, data: { tag?: number } | null | undefined): void {
  ExecutionLog.current.record(String(id), data?.tag);
}

async function scalar(pool: pg.Pool, sql: string, params?: unknown[]): Promise<number> {
  const r = await pool.query(sql, params);
  return Number(Object.values(r.rows[0])[0]);
}

function probePool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pool.on('error', (err) => console.error(`[probe] ${err.message}`));
  return pool;
}

/** Reads rows for ours' open and finalized counts, on either database ours runs on here. */
interface RowReader {
  query(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  scalar(text: string, params?: unknown[]): Promise<number>;
  close(): Promise<void>;
}

async function rowReader(dialect: 'postgres' | 'mysql', url: string): Promise<RowReader> {
  if (dialect === 'postgres') {
    const pool = probePool(url);
    return { query: async (t, p) => (await pool.query(t, p)).rows, scalar: (t, p) => scalar(pool, t, p), close: () => pool.end() };
  }
  const conn = await mysql.createConnection({ uri: url });
  const query = async (t: string, p: unknown[] = []) => (await conn.query(t, p))[0] as Record<string, unknown>[];
  return { query, scalar: async (t, p) => Number(Object.values((await query(t, p))[0] ?? {})[0]), close: () => conn.end() };
}

const claimCounts = { claims: 0, empty: 0 };
let claimsWrapped = false;

/**
 * Counts the scheduler's claims, and the empty ones, by wrapping ClaimService.claim in this
 * process (bench only): with several worker processes, empty claims show them thrashing. Wrapped
 * once per process (a warm-up instance comes first); `warmUp` zeroes the counts after it.
 */
function countOurClaims(): typeof claimCounts {
  if (claimsWrapped) return claimCounts;
  claimsWrapped = true;
  const { ClaimService } = require('nestjs-sql-job-queue') as typeof import('nestjs-sql-job-queue');
  const claim = ClaimService.prototype.claim;
  ClaimService.prototype.claim = async function (this: InstanceType<typeof ClaimService>, ...args: Parameters<typeof claim>) {
    const got = await claim.apply(this, args);
    claimCounts.claims++;
    if (!got.length) claimCounts.empty++;
    return got;
  };
  return claimCounts;
}

/**
 * An unrecorded run in this process before it is measured, on a database of its own: `count`
 * no-op jobs enqueued, then worked off by a second instance of the same system, which is then
 * closed. A fresh process runs its first jobs on a cold JIT (measured in-process: 40-50 µs of
 * Node CPU per job more over 20,000 jobs), so without this every child-process row measured a
 * cold process while pg-throughput's rows are warm. Every system gets the same warm-up.
 */
async function warmUp(options: PeerWorkerOptions, url: string, count: number): Promise<void> {
  const system = SYSTEMS[options.kind]({ ...options, url });
  try {
    await system.prepare();
    await system.enqueue(count);
    await system.start();
    await waitUntilDrained({ remaining: () => system.open(), total: count, timeoutMs: drainTimeout(count), what: 'warm-up' });
  } finally {
    // Its executions are dropped by the measured run's `start` (ExecutionLog.reset), its claims here.
    await system.close();
    claimCounts.claims = 0;
    claimCounts.empty = 0;
  }
}

/** Ours: an enqueue-only app and, on start, a worker app (bench/lib/ours/our-app.ts), both in this process. */
function ours(o: PeerWorkerOptions): System {
  // Loaded here so that the peers' processes do not boot Nest.
  const { bootEnqueuer, bootOurs, enqueueNoops, ourOptions } = require('../lib/ours/our-app') as typeof import('../lib/ours/our-app');
  const { OurRows } = require('../lib/ours/our-rows') as typeof import('../lib/ours/our-rows');
  let enq: Awaited<ReturnType<typeof bootEnqueuer>> | undefined;
  let worker: Awaited<ReturnType<typeof bootOurs>> | undefined;
  let rows: InstanceType<typeof OurRows> | undefined;
  let probe: RowReader | undefined;
  const dialect = o.dialect ?? 'postgres';
  let lo = Infinity;
  let hi = -Infinity;
  const note = (ids: number[]) => ids.forEach((id) => ((lo = Math.min(lo, id)), (hi = Math.max(hi, id))));
  const counts = countOurClaims();
  return {
    claims: () => ({ ...counts }),
    async prepare() {
      enq = await bootEnqueuer(dialect, o.url);
      probe = await rowReader(dialect, o.url);
      rows = new OurRows({ ...probe, close: async () => undefined } as never, dialect);
    },
    async enqueue(count) {
      const ids = await enqueueNoops(enq!.queue, count);
      note(ids);
      return ids.map(String);
    },
    async enqueueOne(tag) {
      const job = await enq!.queue.enqueue({ type: 'noop', args: { tag } });
      note([job.id]);
      return String(job.id);
    },
    async start() {
      worker = await bootOurs(ourOptions(dialect, o.url, o.settings ?? {}), true);
    },
    open: () => rows!.open([lo, hi]),
    finalization: () => rows!.finalization([lo, hi]),
    async graph(nodes) {
      const out = await enq!.queue.enqueueGraph(nodes.map((n) => ({ ref: n.ref, type: 'noop', args: {}, dependsOn: n.dependsOn ?? [] })));
      note(Object.values(out));
      return Object.fromEntries(Object.entries(out).map(([ref, id]) => [ref, String(id)]));
    },
    async close() {
      await worker?.close();
      await enq?.close();
      await probe?.close();
    },
  };
}

/** graphile-worker 0.18.0: WorkerUtils for enqueues, `run()` for the worker; completed jobs are deleted. */
function graphile(o: PeerWorkerOptions): System {
  const gw: Loose = require('graphile-worker-0.18');
  const quiet = new gw.Logger(() => (level: string, message: string) => {
    if (level === 'error') console.error(`[graphile-worker] ${message}`);
  });
  const newPool = () => {
    const pool = new pg.Pool({ connectionString: o.url, max: 10 });
    pool.on('error', (err) => console.error(`[graphile pool] ${err.message}`));
    pool.on('connect', (c) => c.on('error', (err: Error) => console.error(`[graphile client] ${err.message}`)));
    return pool;
  };
  let utils: Loose;
  let runner: Loose;
  let enqueuePool: pg.Pool | undefined;
  let workerPool: pg.Pool | undefined;
  let enqueued = 0;
  const left = () => scalar(enqueuePool!, 'SELECT COUNT(*) FROM graphile_worker._private_jobs');
  return {
    async prepare() {
      enqueuePool = newPool();
      utils = await gw.makeWorkerUtils({ pgPool: enqueuePool, logger: quiet });
      await utils.migrate();
    },
    async enqueue(count) {
      const ids: string[] = [];
      for (let start = 0; start < count; start += 1_000) {
        const specs = Array.from({ length: Math.min(1_000, count - start) }, () => ({ identifier: QUEUE, payload: {} }));
        for (const job of await utils.addJobs(specs)) ids.push(String(job.id));
      }
      enqueued += ids.length;
      return ids;
    },
    async enqueueOne(tag) {
      const job = await utils.addJob(QUEUE, { tag });
      enqueued++;
      return String(job.id);
    },
    async start() {
      workerPool = newPool();
      runner = await gw.run({
        pgPool: workerPool,
        concurrency: 10,
        noHandleSignals: true,
        logger: quiet,
        taskList: { [QUEUE]: async (payload: { tag?: number } | null, helpers: Loose) => record(helpers.job.id, payload) },
        parsedCronItems: [],
        preset: { worker: o.settings ?? {} },
      });
    },
    open: left,
    async finalization() {
      const n = await left();
      return { finalized: enqueued - n, notFinalized: n };
    },
    async graph() {
      throw new Error('graphile-worker has no DAG API');
    },
    async close() {
      await runner?.stop();
      await utils?.release();
      await workerPool?.end();
      await enqueuePool?.end();
    },
  };
}

/**
 * pg-boss 12.38.0. The queue is created with `notify: true` (12's LISTEN/NOTIFY wake-up); `work()`
 * with `localConcurrency` loops, each fetching `batchSize` jobs; `burstWhenBatchFull` fetches
 * again at once while batches come back full (settings in bench/lib/peers/node22.ts).
 */
function boss12(o: PeerWorkerOptions): System {
  const { PgBoss }: Loose = require('pg-boss-12');
  let boss: Loose;
  let probe: pg.Pool | undefined;
  const q = `name = '${QUEUE}'`;
  return {
    async prepare() {
      // flowIntervalSeconds 1 (the minimum; default 5): pg-boss 12 releases a flow's waiting jobs
      // in a periodic pass, so this sets the pace of every DAG link.
      boss = new PgBoss({ connectionString: o.url, flowIntervalSeconds: 1, useListenNotify: true });
      boss.on('error', (err: Error) => console.error(`[pg-boss] ${err.message}`));
      await boss.start();
      await boss.createQueue(QUEUE, { notify: true });
      probe = probePool(o.url);
    },
    async enqueue(count) {
      const ids: string[] = [];
      for (let start = 0; start < count; start += 1_000) {
        const jobs = Array.from({ length: Math.min(1_000, count - start) }, () => ({ data: {} }));
        const got: string[] | null = await boss.insert(QUEUE, jobs, { returnId: true });
        if (!got || got.length !== jobs.length) throw new Error(`pg-boss insert returned ${got?.length ?? 'null'} ids for ${jobs.length} jobs`);
        ids.push(...got);
      }
      return ids;
    },
    async enqueueOne(tag) {
      return String(await boss.send(QUEUE, { tag }));
    },
    async start() {
      await boss.work(QUEUE, o.settings ?? {}, async (jobs: Array<{ id: string; data: { tag?: number } | null }>) => {
        for (const job of jobs) record(job.id, job.data);
      });
    },
    open: () => scalar(probe!, `SELECT COUNT(*) FROM pgboss.job WHERE ${q} AND state IN ('created', 'retry', 'active')`),
    async finalization() {
      // Completed rows may have been moved to the archive by maintenance, if 12 still has one.
      const archive = await scalar(probe!, `SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'pgboss' AND tablename = 'archive'`);
      const count = async (cond: string) =>
        (await scalar(probe!, `SELECT COUNT(*) FROM pgboss.job WHERE ${q} AND ${cond}`)) +
        (archive ? await scalar(probe!, `SELECT COUNT(*) FROM pgboss.archive WHERE ${q} AND ${cond}`) : 0);
      return { finalized: await count(`state = 'completed'`), notFinalized: await count(`state <> 'completed'`) };
    },
    async graph(nodes) {
      const out: Record<string, string> = await boss.flow(nodes.map((n) => ({ ref: n.ref, name: QUEUE, data: {}, dependsOn: n.dependsOn ?? [] })));
      return out;
    },
    async close() {
      await boss?.stop({ graceful: true, wait: true, timeout: 10_000 });
      await probe?.end();
    },
  };
}

/**
 * BullMQ 6.7.0 on its PostgreSQL backend (`createPostgresBackend`, migrations on). A flow is a
 * tree whose parent runs after its children, so a DAG node becomes the parent of the nodes it
 * depends on; shapes where a job is depended on by two jobs cannot be expressed and are refused.
 * Custom job ids (the node refs) give the ref → id map.
 */
function bullmq(o: PeerWorkerOptions): System {
  const { Queue, Worker, FlowProducer, createPostgresBackend }: Loose = require('bullmq');
  const connection = { connectionString: o.url, migrate: true };
  let queue: Loose;
  let worker: Loose;
  let flows: Loose;
  let seq = 0;
  const counts = async () => queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'paused', 'completed', 'failed');
  return {
    async prepare() {
      queue = new Queue(QUEUE, { connection }, createPostgresBackend);
      await queue.waitUntilReady?.();
    },
    async enqueue(count) {
      const ids: string[] = [];
      for (let start = 0; start < count; start += 1_000) {
        const jobs = Array.from({ length: Math.min(1_000, count - start) }, () => ({ name: QUEUE, data: {} }));
        for (const job of await queue.addBulk(jobs)) ids.push(String(job.id));
      }
      return ids;
    },
    async enqueueOne(tag) {
      const job = await queue.add(QUEUE, { tag });
      return String(job.id);
    },
    async start() {
      worker = new Worker(QUEUE, async (job: Loose) => record(job.id, job.data), { connection, ...(o.settings ?? {}) }, createPostgresBackend);
      worker.on('error', (err: Error) => console.error(`[bullmq] ${err.message}`));
      await worker.waitUntilReady?.();
    },
    async open() {
      const c = await counts();
      return c.waiting + c.active + c.delayed + c.prioritized + c['waiting-children'] + c.paused;
    },
    async finalization() {
      const c = await counts();
      return { finalized: c.completed, notFinalized: c.failed + c.waiting + c.active + c.delayed + c.prioritized + c['waiting-children'] + c.paused };
    },
    async graph(nodes) {
      flows ??= new FlowProducer({ connection }, createPostgresBackend);
      const run = ++seq;
      const byRef = new Map(nodes.map((n) => [n.ref, n]));
      const dependents = new Map<string, number>();
      for (const n of nodes) for (const d of n.dependsOn ?? []) dependents.set(d, (dependents.get(d) ?? 0) + 1);
      if ([...dependents.values()].some((n) => n > 1)) throw new Error('BullMQ flows are trees: a job can have one parent only');
      const id = (ref: string) => `r${run}-${ref}`;
      const tree = (ref: string): Loose => {
        const n = byRef.get(ref)!;
        const children = (n.dependsOn ?? []).map(tree);
        return { name: QUEUE, queueName: QUEUE, data: {}, opts: { jobId: id(ref) }, ...(children.length ? { children } : {}) };
      };
      const roots = nodes.filter((n) => !dependents.has(n.ref));
      // One flow per tree, added concurrently in groups of 10.
      for (let i = 0; i < roots.length; i += 10) await Promise.all(roots.slice(i, i + 10).map((r) => flows.add(tree(r.ref))));
      return Object.fromEntries(nodes.map((n) => [n.ref, id(n.ref)]));
    },
    async close() {
      await worker?.close();
      await flows?.close();
      await queue?.close();
    },
  };
}

const SYSTEMS: Record<PeerKind, (o: PeerWorkerOptions) => System> = { ours, gw18: graphile, boss12, bullmq };

runChild(async () => {
  const options = childOptions<PeerWorkerOptions>();
  const system = SYSTEMS[options.kind](options);
  // A tagged job's start time goes to the parent at once (ours records through our-app's handler).
  ExecutionLog.onTag = (tag, at) => send({ type: 'tag', tag, at });
  let lastGraph: { nodes: PeerGraphNode[]; ids: Record<string, string> } | undefined;
  const handlers: Record<string, (m: Record<string, unknown>) => Promise<Record<string, unknown>>> = {
    warmUp: async (m) => (await warmUp(options, String(m.url), Number(m.count)), {}),
    prepare: async () => (await system.prepare(), {}),
    enqueue: async (m) => ({ ids: await system.enqueue(Number(m.count)) }),
    enqueueOne: async (m) => ({ id: await system.enqueueOne(Number(m.tag)) }),
    start: async () => {
      ExecutionLog.reset();
      await system.start();
      return {};
    },
    open: async () => ({ n: await system.open() }),
    finalization: async () => system.finalization() as unknown as Promise<Record<string, unknown>>,
    graph: async (m) => {
      const nodes = m.nodes as PeerGraphNode[];
      const ids = await system.graph(nodes);
      lastGraph = { nodes, ids };
      return { ids };
    },
    /** Jobs that started before one of their dependencies (first starts, in this process's order). */
    order: async () => {
      let early = 0;
      const seq = ExecutionLog.current.firstSeq;
      for (const n of lastGraph?.nodes ?? []) {
        const mine = seq.get(lastGraph!.ids[n.ref]);
        for (const d of n.dependsOn ?? []) {
          const theirs = seq.get(lastGraph!.ids[d]);
          if (mine !== undefined && theirs !== undefined && mine < theirs) early++;
        }
      }
      return { early };
    },
    claims: async () => system.claims?.() ?? {},
    cpu: async () => {
      const u = process.cpuUsage();
      return { us: u.user + u.system };
    },
  };
  process.on('message', (m: { type: string } & Record<string, unknown>) => {
    const handler = handlers[m.type];
    if (!handler) return; // report / gc / stop: serveParent
    handler(m).then(
      (answer) => send({ type: `${m.type}:done`, ...answer }),
      (err) => send({ type: 'error', message: String((err as Error)?.stack ?? err) }),
    );
  });
  serveParent(() => system.close());
  send({ type: 'ready', pid: process.pid, node: process.version });
});
