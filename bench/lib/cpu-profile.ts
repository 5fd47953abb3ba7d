import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

/**
 * BENCH_CPU_PROF=dir: a V8 CPU profile of one measured phase (nothing of the setup), written as
 * dir/<name>-<time>.cpuprofile on stop. Undefined when the variable is not set.
 */
export async function startCpuProfile(): Promise<{ stop(name: string): Promise<void> } | undefined> {
  const dir = process.env.BENCH_CPU_PROF;
  if (!dir) return undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return {
    async stop(name) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(join(dir, `${name.replace(/[^\w.-]+/g, '_')}-${Date.now()}.cpuprofile`), JSON.stringify(profile));
      session.disconnect();
    },
  };
}
