/**
 * processes-node22 — many worker processes on one PostgreSQL (issue 15 point 4): ours with 1, 2
 * and 4 worker processes (concurrency 10 each, defaults) against graphile-worker 0.18 with 1 and 2
 * processes (defaults), all on the Node 22 binary as in peers-node22, 20,000 no-op jobs per run,
 * interleaved. Reports total jobs/s, the ratio to one process, and for ours the claim statements
 * and empty claims (all processes together, counted by wrapping ClaimService.claim in each child).
 */
import { FailureLog } from '../lib/correctness';
import { cell, num } from '../lib/format';
import { node22Binary } from '../lib/node22';
import { ClaimTotals, NODE22_SYSTEMS, node22Subject } from '../lib/peers/node22';
import type { ScenarioReport, Table } from '../lib/report';
import { standardSizes, type BenchContext, type Scenario } from '../lib/scenario';
import { throughputTable, type SystemSpec } from '../lib/sets';
import { spread } from '../lib/stats';

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
    const { jobs } = standardSizes(ctx);
    const claims = new Map<string, ClaimTotals>();
    const ours = (n: number): SystemSpec => {
      const totals = new ClaimTotals();
      claims.set(`ours-${n}`, totals);
      return { key: `ours-${n}`, label: `ours (defaults) × ${n} process${n > 1 ? 'es' : ''}`, dialect: 'postgres', factory: node22Subject(S.ours, n, totals) };
    };
    const gw = (n: number): SystemSpec => ({
      key: `gw-${n}`,
      label: `graphile-worker 0.18 (defaults) × ${n} process${n > 1 ? 'es' : ''}`,
      dialect: 'postgres',
      factory: node22Subject(S.gwDefault, n),
    });
    const specs = [ours(1), ours(2), ours(4), gw(1), gw(2)];
    const table = await throughputTable(ctx, 'Worker processes on one PostgreSQL (Node 22)', specs, jobs, failures, ['ours-1']);
    table.notes = [
      `Each process is a child on Node ${node.version} at concurrency 10; the first also enqueues. Node CPU (worker processes) sums all of them.`,
    ];
    const rows = [...claims].map(([key, totals]) => {
      const c = spread(totals.runs.map((r) => r.claims));
      const e = spread(totals.runs.map((r) => r.empty));
      const share = spread(totals.runs.map((r) => (r.claims ? (100 * r.empty) / r.claims : 0)));
      return [specs.find((s) => s.key === key)!.label, cell(c), cell(e), cell(share, 1)];
    });
    const claimTable: Table = {
      title: `Claims of ours per run, all processes — median (min–max) of ${ctx.config.runs} run(s)`,
      columns: ['System', 'Claim statements', 'Empty claims', 'Empty %'],
      rows,
      notes: [`Counted from worker start until the bench asks for the execution logs (just after the last of ${num(jobs)} jobs is finalized); includes the idle claims at the end.`],
    };
    return {
      name: this.name,
      description: 'Total throughput with 1, 2 and 4 worker processes of ours vs 1 and 2 of graphile-worker 0.18, one PostgreSQL.',
      settings: [`${jobs} jobs per run`, S.ours.description, S.gwDefault.description],
      tables: [table, claimTable],
      failures: failures.entries,
    };
  },
};
