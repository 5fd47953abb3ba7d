/**
 * processes-node22 — many worker processes on one database (issue 15 point 4): ours with 1, 2
 * and 4 worker processes (concurrency 10 each, defaults) against graphile-worker 0.18 with 1 and 2
 * processes (defaults) on PostgreSQL, and ours with 1, 2 and 4 on MariaDB (no peer runs there),
 * all on the Node 22 binary as in peers-node22, interleaved. Reports total jobs/s, the ratio to one
 * process, and for ours the claim statements and empty claims (all processes together, counted by
 * wrapping ClaimService.claim in each child).
 *
 * Runs are 2.5× the standard job count (50,000): every added process started cold (its JIT, its
 * server connections and their plans), and with 20,000 jobs split four ways that warm-up was most
 * of what a run measured (4 processes at 0.84× of one there, 1.07× at 100,000). Each child now
 * warms its JIT on a database of its own first (Node22Child.warmUp); its connections to the
 * measured database and their plans still start cold.
 */
import { FailureLog } from '../lib/correctness';
import { cell, num } from '../lib/format';
import { node22Binary } from '../lib/node22';
import { ClaimTotals, NODE22_SYSTEMS, node22Subject } from '../lib/peers/node22';
import type { ScenarioReport, Table } from '../lib/report';
import { standardSizes, type BenchContext, type Scenario } from '../lib/scenario';
import { throughputTable, type SystemSpec } from '../lib/sets';
import { spread } from '../lib/stats';
import type { Dialect } from 'nestjs-sql-job-queue';

const S = NODE22_SYSTEMS;

export const processesNode22: Scenario = {
  name: 'processes-node22',
  async run(ctx: BenchContext): Promise<ScenarioReport> {
    const failures = new FailureLog();
    const node = node22Binary();
    if (!node) {
      failures.add('processes-node22', ['no Node ≥ 22.18 (run npm ci --prefix bench/node22)']);
      return { name: this.name, description: 'skipped', settings: [], tables: [], failures: failures.entries };
    }
    const jobs = Math.round(standardSizes(ctx).jobs * 2.5);
    const claims = new Map<string, ClaimTotals>();
    const ours = (dialect: Dialect, n: number): SystemSpec => {
      const totals = new ClaimTotals();
      const key = `ours-${dialect}-${n}`;
      claims.set(key, totals);
      return { key, label: `ours (defaults) × ${n} process${n > 1 ? 'es' : ''}`, dialect, factory: node22Subject(S.ours, n, totals), warmsItself: true };
    };
    const gw = (n: number): SystemSpec => ({
      key: `gw-${n}`,
      label: `graphile-worker 0.18 (defaults) × ${n} process${n > 1 ? 'es' : ''}`,
      dialect: 'postgres',
      factory: node22Subject(S.gwDefault, n),
      warmsItself: true,
    });
    const claimTable = (title: string, specs: SystemSpec[]): Table => ({
      title: `${title} — median (min–max) of ${ctx.config.runs} run(s)`,
      columns: ['System', 'Claim statements', 'Empty claims', 'Empty %'],
      rows: specs
        .filter((spec) => claims.has(spec.key))
        .map((spec) => {
          const runs = claims.get(spec.key)!.runs;
          const share = spread(runs.map((r) => (r.claims ? (100 * r.empty) / r.claims : 0)));
          return [spec.label, cell(spread(runs.map((r) => r.claims))), cell(spread(runs.map((r) => r.empty))), cell(share, 1)];
        }),
      notes: [`Counted from worker start until the bench asks for the execution logs (just after the last of ${num(jobs)} jobs is finalized); includes the idle claims at the end.`],
    });
    const processNote = `Each process is a child on Node ${node.version} at concurrency 10; the first also enqueues. Node CPU (worker processes) sums all of them.`;

    const pgSpecs = [ours('postgres', 1), ours('postgres', 2), ours('postgres', 4), gw(1), gw(2)];
    const pgTable = await throughputTable(ctx, 'Worker processes on one PostgreSQL (Node 22)', pgSpecs, jobs, failures, ['ours-postgres-1']);
    pgTable.notes = [processNote];
    const mysqlSpecs = [ours('mysql', 1), ours('mysql', 2), ours('mysql', 4)];
    const mysqlTable = await throughputTable(ctx, 'Worker processes on one MariaDB (Node 22)', mysqlSpecs, jobs, failures, ['ours-mysql-1']);
    mysqlTable.notes = [processNote, 'No peer runs on MariaDB. Its CPU is the whole server process, since the run started.'];
    return {
      name: this.name,
      description: 'Total throughput with 1, 2 and 4 worker processes of ours vs 1 and 2 of graphile-worker 0.18 on one PostgreSQL, and of ours on one MariaDB.',
      settings: [`${jobs} jobs per run`, S.ours.description, S.gwDefault.description],
      tables: [pgTable, claimTable('Claims of ours per run on PostgreSQL, all processes', pgSpecs), mysqlTable, claimTable('Claims of ours per run on MariaDB, all processes', mysqlSpecs)],
      failures: failures.entries,
    };
  },
};
