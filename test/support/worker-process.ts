import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

// Specs run from the repository root (ESM has no __dirname). One file per worker script,
// bundled by global-setup (see bundleWorkers there).
const DIST_WORKERS = join(process.cwd(), 'dist/test/worker-bundles');

export type WorkerMessage = { type: string } & Record<string, unknown>;

/**
 * A real OS process running one of test/workers/*.ts (compiled and bundled by global-setup),
 * exchanging one JSON message per line.
 */
export class WorkerProcess {
  readonly messages: WorkerMessage[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcessWithoutNullStreams;
  private waiters: Array<() => void> = [];

  constructor(script: string, options: Record<string, unknown>, env: Record<string, string> = {}, nodeFlags: string[] = []) {
    this.child = spawn(process.execPath, [...nodeFlags, join(DIST_WORKERS, `${script}.js`)], {
      env: { ...process.env, ...env, JQ_OPTIONS: JSON.stringify(options) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      try {
        this.messages.push(JSON.parse(line));
      } catch {
        this.messages.push({ type: 'log', line });
      }
      this.waiters.forEach((w) => w());
    });
    createInterface({ input: this.child.stderr }).on('line', (line) => this.stderr.push(line));
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => {
      this.dead = true;
      resolve({ code, signal });
      this.waiters.forEach((w) => w());
    }));
  }

  /** True once the process has exited. */
  dead = false;

  get pid(): number {
    return this.child.pid!;
  }

  send(line: string): void {
    this.child.stdin.write(line + '\n');
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    this.child.kill(signal);
  }

  /** The first message of this type; rejects if the process exits or reports an error first. */
  async waitFor(type: string, timeoutMs = 60_000): Promise<WorkerMessage> {
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    void this.exited.then(() => (exited = true));
    for (;;) {
      const found = this.messages.find((m) => m.type === type);
      if (found) return found;
      const error = this.messages.find((m) => m.type === 'error');
      if (error) throw new Error(`worker ${this.pid} failed: ${String(error.message)}`);
      if (exited) throw new Error(`worker ${this.pid} exited before "${type}"; stderr:\n${this.stderr.join('\n')}`);
      if (Date.now() > deadline) throw new Error(`worker ${this.pid}: no "${type}" within ${timeoutMs} ms; stderr:\n${this.stderr.join('\n')}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      this.waiters = [];
    }
  }

  /** What the process said besides its JSON messages (its log lines and stderr), the last `lines` of each. */
  logTail(lines = 40): string {
    const logs = this.messages.filter((m) => m.type === 'log').map((m) => String(m.line));
    return [`worker ${this.pid}${this.dead ? ' (exited)' : ''}:`, ...logs.slice(-lines), ...this.stderr.slice(-lines)].join('\n');
  }

  /**
   * `work`, whose failure also carries what the workers logged: a wait that times out in a
   * multi-process spec otherwise says nothing of why the other processes did not act.
   */
  static async explained<T>(work: Promise<T>, workers: WorkerProcess[], context?: () => Promise<unknown>): Promise<T> {
    try {
      return await work;
    } catch (err) {
      if (err instanceof Error) {
        const seen = context ? await context().then((c) => JSON.stringify(c), (e) => `(context failed: ${String(e)})`) : '';
        err.message += `\n${seen}\n${workers.map((w) => w.logTail()).join('\n')}`;
      }
      throw err;
    }
  }
}
