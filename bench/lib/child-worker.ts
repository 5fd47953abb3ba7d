import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export type ChildMessage = { type: string } & Record<string, unknown>;

/** Compiled worker scripts live next to this file's parent: dist/bench/workers/*.js. */
const WORKERS_DIR = join(__dirname, '..', 'workers');

/**
 * A worker in its own OS process (bench/workers/*.ts, compiled), driven over Node's IPC channel:
 * the child says `ready`, answers `report` / `gc` requests, streams `rss` samples if asked, and
 * exits after `stop`.
 */
export class ChildWorker {
  private readonly listeners = new Set<(m: ChildMessage) => void>();
  private readonly stderr: string[] = [];
  readonly exited: Promise<number | null>;

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (m: ChildMessage) => this.listeners.forEach((l) => l(m)));
    child.stderr?.on('data', (d: Buffer) => {
      this.stderr.push(d.toString());
      if (this.stderr.length > 200) this.stderr.shift();
    });
    child.stdout?.on('data', (d: Buffer) => process.stdout.write(d));
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  }

  /**
   * Starts `workers/<script>.js` with `options` in BENCH_OPTIONS and waits for its `ready`;
   * `execPath` runs it on another Node binary (the Node 22 peers, bench/lib/node22.ts).
   */
  static async start(
    script: string,
    options: unknown,
    execArgv: string[] = [],
    timeoutMs = 60_000,
    execPath?: string,
  ): Promise<{ worker: ChildWorker; ready: ChildMessage }> {
    const child = fork(join(WORKERS_DIR, `${script}.js`), [], {
      env: { ...process.env, BENCH_OPTIONS: JSON.stringify(options) },
      execArgv,
      ...(execPath ? { execPath } : {}),
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const worker = new ChildWorker(child);
    const ready = await worker.next('ready', timeoutMs);
    return { worker, ready };
  }

  get pid(): number {
    return this.child.pid!;
  }

  on(listener: (m: ChildMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  send(message: ChildMessage): void {
    this.child.send(message);
  }

  /** The next message of `type`; rejects on an `error` message, on exit, or after `timeoutMs`. */
  next(type: string, timeoutMs = 60_000): Promise<ChildMessage> {
    return new Promise((resolve, reject) => {
      const finish = (err: Error | null, m?: ChildMessage) => {
        clearTimeout(timer);
        off();
        if (err) reject(err);
        else resolve(m!);
      };
      const off = this.on((m) => {
        if (m.type === type) finish(null, m);
        else if (m.type === 'error') finish(new Error(`worker ${this.pid}: ${String(m.message)}`));
      });
      const timer = setTimeout(() => finish(new Error(`worker ${this.pid}: no "${type}" within ${timeoutMs} ms\n${this.stderr.join('')}`)), timeoutMs);
      void this.exited.then((code) => finish(new Error(`worker ${this.pid} exited (${code}) before "${type}"\n${this.stderr.join('')}`)));
    });
  }

  async request(message: ChildMessage, reply: string, timeoutMs = 60_000): Promise<ChildMessage> {
    const answer = this.next(reply, timeoutMs);
    this.send(message);
    return answer;
  }

  /** Asks the worker to shut down cleanly; kills it if it does not exit in time. */
  async stop(timeoutMs = 30_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    try {
      this.send({ type: 'stop' });
    } catch {
      this.child.kill('SIGKILL');
    }
    await this.exited;
    clearTimeout(timer);
  }
}
