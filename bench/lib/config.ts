/** Command-line flags of `npm run bench -- …`, resolved into what every scenario reads. */
export interface BenchConfig {
  /** Scenario names to run, in the order given (default: all). */
  scenarios: string[];
  /** Measured runs per configuration; tables report median, min and max. */
  runs: number;
  /** Small sizes and one run: a smoke test of the harness, not a measurement. */
  quick: boolean;
  /** Overrides the job count of the throughput and memory scenarios. */
  jobs: number | undefined;
  /** Overrides the number of latency samples. */
  samples: number | undefined;
  /** Where the Markdown report goes. */
  out: string | undefined;
}

export class UsageError extends Error {}

/**
 * Jobs of the unrecorded warm-up before a process is measured (`BENCH_WARMUP_JOBS`, 0 for none):
 * a process's first run of a code path runs on a cold JIT (HISTORY.md, "Observability overhead").
 */
export function warmUpJobs(): number {
  return Number(process.env.BENCH_WARMUP_JOBS ?? 5_000);
}

export function parseArgs(argv: string[], known: string[]): BenchConfig {
  const flags = new Map<string, string>();
  for (const arg of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new UsageError(`unexpected argument "${arg}"`);
    flags.set(m[1], m[2] ?? 'true');
  }
  for (const name of flags.keys()) {
    if (!['scenario', 'runs', 'quick', 'jobs', 'samples', 'out', 'help'].includes(name)) throw new UsageError(`unknown flag --${name}`);
  }
  if (flags.has('help')) throw new UsageError('');
  const quick = flags.get('quick') === 'true';
  const scenarios = flags.has('scenario') ? flags.get('scenario')!.split(',').map((s) => s.trim()).filter(Boolean) : known;
  const unknown = scenarios.filter((s) => !known.includes(s));
  if (unknown.length) throw new UsageError(`unknown scenario(s): ${unknown.join(', ')}`);
  return {
    scenarios,
    runs: positiveInt(flags, 'runs') ?? (quick ? 1 : 3),
    quick,
    jobs: positiveInt(flags, 'jobs'),
    samples: positiveInt(flags, 'samples'),
    out: flags.get('out'),
  };
}

function positiveInt(flags: Map<string, string>, name: string): number | undefined {
  const raw = flags.get(name);
  if (raw === undefined) return undefined;
  const n = Number(raw.replace(/[_,]/g, ''));
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} needs a positive integer, got "${raw}"`);
  return n;
}

export const USAGE = `usage: npm run bench -- [--scenario=a,b] [--runs=N] [--jobs=N] [--samples=N] [--quick] [--out=file.md]`;
