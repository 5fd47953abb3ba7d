/**
 * `npm run bench -- [--scenario=a,b] [--runs=N] [--jobs=N] [--samples=N] [--quick] [--out=file]`
 *
 * Runs the chosen scenarios one after the other, prints each scenario's tables as it finishes,
 * and writes bench/RESULTS.md (a full run) or --out (any run) with the machine, versions, settings and tables. Runs from dist/
 * (`npm run build` compiles bench/); every database it creates is dropped again.
 */
import 'reflect-metadata';
import { join } from 'node:path';
import { parseArgs, USAGE, UsageError } from './lib/config';
import { collectEnvironment, ROOT } from './lib/env';
import { renderText, type ScenarioReport } from './lib/report';
import { writeResults } from './lib/results-file';
import type { Scenario } from './lib/scenario';
import { fairShareScale } from './scenarios/fair-share-scale';
import { graphs } from './scenarios/graphs';
import { graphsLarge } from './scenarios/graphs-large';
import { memory } from './scenarios/memory';
import { mysqlScenario } from './scenarios/mysql';
import { pgLatency } from './scenarios/pg-latency';
import { peersNode22 } from './scenarios/peers-node22';
import { pgCeiling } from './scenarios/pg-ceiling';
import { pgThroughput } from './scenarios/pg-throughput';
import { pgTracing } from './scenarios/pg-tracing';
import { pgObservability } from './scenarios/pg-observability';
import { processesNode22 } from './scenarios/processes-node22';
import { queryScenario } from './scenarios/query';
import { redrive } from './scenarios/redrive';
import { scanCost } from './scenarios/scan-cost';
import { sqliteScenario } from './scenarios/sqlite';
import { waitersScenario } from './scenarios/waiters';
import { manyTypes } from './scenarios/many-types';
import { pausedScale } from './scenarios/paused-scale';

const SCENARIOS: Scenario[] = [
  pgThroughput, pgCeiling, pgTracing, pgObservability, pgLatency, mysqlScenario, sqliteScenario, scanCost, graphs, graphsLarge, memory, waitersScenario, manyTypes, pausedScale, fairShareScale, queryScenario, redrive, peersNode22, processesNode22,
];

async function main(): Promise<number> {
  let config;
  try {
    config = parseArgs(process.argv.slice(2), SCENARIOS.map((s) => s.name));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    if (err.message) console.error(err.message);
    console.error(`${USAGE}\nscenarios: ${SCENARIOS.map((s) => s.name).join(', ')}`);
    return 2;
  }
  const env = await collectEnvironment();
  console.log(`${env.date} · ${env.machine} · Node ${env.node} · ${Object.entries(env.servers).map(([k, v]) => `${k} ${v}`).join(' · ')}`);
  console.log(`runs ${config.runs}${config.quick ? ' · QUICK smoke run' : ''} · scenarios ${config.scenarios.join(', ')}\n`);
  const reports: ScenarioReport[] = [];
  const started = Date.now();
  for (const name of config.scenarios) {
    const scenario = SCENARIOS.find((s) => s.name === name)!;
    console.log(`=== ${name}`);
    const t0 = Date.now();
    let report: ScenarioReport;
    try {
      report = await scenario.run({ config, progress: (m) => console.log(`  ${m}`) });
    } catch (err) {
      const message = String((err as Error)?.stack ?? err);
      console.error(`  scenario ${name} crashed: ${message}`);
      report = { name, description: 'crashed', settings: [], tables: [], failures: [`FAILED: scenario crashed: ${message.split('\n')[0]}`] };
    }
    report.elapsedMs = Date.now() - t0;
    reports.push(report);
    console.log('');
    for (const t of report.tables) console.log(renderText(t) + '\n');
    console.log(report.failures.length ? `${name}: FAILED (${report.failures.length} run(s) not counted)\n` : `${name}: ok (${(report.elapsedMs / 1000).toFixed(0)} s)\n`);
  }
  // bench/RESULTS.md holds one full run; a run of some scenarios only would replace it with a
  // fragment, so it is written to a file only when asked (--out).
  const full = SCENARIOS.every((s) => config.scenarios.includes(s.name));
  const out = config.out ?? (full ? join(ROOT, 'bench', 'RESULTS.md') : undefined);
  const took = `${((Date.now() - started) / 1000).toFixed(0)} s`;
  if (out) {
    writeResults(out, env, config, reports);
    console.log(`wrote ${out} after ${took}`);
  } else {
    console.log(`done after ${took}; bench/RESULTS.md is left as it is for a partial run (pass --out=file.md to keep these tables)`);
  }
  return reports.some((r) => r.failures.length) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
