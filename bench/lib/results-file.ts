import { writeFileSync } from 'node:fs';
import type { BenchConfig } from './config';
import type { Environment } from './env';
import { renderMarkdown, type ScenarioReport } from './report';

/** bench/RESULTS.md: when, where, with what, how, and the tables of every scenario run. */
export function writeResults(path: string, env: Environment, config: BenchConfig, reports: ScenarioReport[]): void {
  const out: string[] = ['# Benchmark results', ''];
  if (config.quick) out.push('> **Quick smoke run** (`--quick`): small sizes, one run. Not a measurement; do not quote these figures.', '');
  out.push(
    `- Date: ${env.date}`,
    `- Machine: ${env.machine} (${env.os}); load average at start ${env.loadAverage}`,
    `- Node.js: ${env.node}`,
    `- Servers: ${Object.entries(env.servers).map(([k, v]) => `${k} ${v}`).join(', ')}`,
    `- Packages: ${Object.entries(env.packages).map(([k, v]) => `${k} ${v}`).join(', ')}`,
    `- Commit: ${env.commit}`,
    `- Command: \`npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\``,
    `- Runs per configuration: ${config.runs} (tables show median, and min–max when there was more than one run)`,
    '',
    'Every run checks correctness as it measures (each job executed at least once, the database shows',
    'each finalized exactly once, counts match); a run that fails the check is listed and left out of the tables.',
    '',
    // The full run replaces this file; what was measured on the way lives on beside it.
    'Before/after measurements of each change, profiles and earlier runs: [HISTORY.md](HISTORY.md).',
    '',
  );
  for (const r of reports) {
    out.push(`## ${r.name}`, '', r.description, '');
    if (r.elapsedMs !== undefined) out.push(`Wall time of the scenario: ${(r.elapsedMs / 1000).toFixed(0)} s.`, '');
    out.push('Settings:', '', ...r.settings.map((s) => `- ${s}`), '');
    for (const t of r.tables) out.push(renderMarkdown(t), '');
    if (r.failures.length) out.push('**FAILED runs (not counted):**', '', ...r.failures.map((f) => `- ${f}`), '');
  }
  writeFileSync(path, out.join('\n'));
}
