import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Dialect } from 'nestjs-sql-job-queue';

export interface CpuUse {
  /** CPU of this (the bench) process: the worker under test runs in it. */
  nodeUs: number;
  /** CPU of the PostgreSQL backends serving the run's database, or of the MariaDB server; undefined on SQLite. */
  databaseUs?: number;
  /** CPU of the worker's own process when it runs in a child (Subject.workerCpuUs). */
  workerUs?: number;
}

/**
 * CPU time spent between start and stop, in this process and in the database server (PostgreSQL:
 * the run database's backends; MariaDB: the server process), read from /proc by a sampler process. Unlike wall time, CPU per job hardly depends on
 * how the machine's cores happen to be shared, so it compares systems on a loaded machine.
 */
export class CpuMeter {
  private constructor(
    private readonly startedAt: NodeJS.CpuUsage,
    private readonly sampler: ChildProcess | undefined,
  ) {}

  /** Resolves once the sampler has taken its first reading (what the database used before it is left out). */
  static async start(dialect: Dialect, database: string): Promise<CpuMeter> {
    const sampler =
      dialect !== 'sqlite' && process.platform === 'linux'
        ? fork(join(__dirname, '..', 'workers', 'db-cpu-sampler.js'), [dialect, database], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
        : undefined;
    if (sampler) {
      await new Promise<void>((resolve, reject) => {
        sampler.once('message', () => resolve());
        sampler.once('exit', (code) => reject(new Error(`the database CPU sampler exited (${code}) before its first reading`)));
      });
    }
    return new CpuMeter(process.cpuUsage(), sampler);
  }

  async stop(): Promise<CpuUse> {
    const node = process.cpuUsage(this.startedAt);
    const nodeUs = node.user + node.system;
    if (!this.sampler) return { nodeUs };
    const sampler = this.sampler;
    let out = '';
    sampler.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise((resolve) => sampler.once('exit', resolve));
    sampler.kill('SIGTERM');
    await exited;
    return { nodeUs, databaseUs: Number(out) || undefined };
  }
}
