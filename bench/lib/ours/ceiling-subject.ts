import pg from 'pg';
import type { BenchDatabase } from '../databases';
import { ExecutionLog } from '../execution-log';
import type { Subject, SubjectFactory } from '../subject';
import { ourSubject } from './subject';

export interface CeilingOptions {
  label: string;
  /** Connections, each running its own claim → complete loop. */
  connections: number;
  /** Jobs per claim and per complete (the worker's `prefetch: 500` batch). */
  batch: number;
}

/**
 * What our schema allows with Node out of the way (issue 15 point 2): no Nest app, no handler,
 * no scheduler; each connection calls the same SQL functions the worker calls, in a loop:
 * `job_queue_claim` for `batch` jobs (leased and started in one statement), then
 * `job_queue_complete` for all of them (the guarded batched complete with the dependents'
 * countdown), until a claim comes back empty. Enqueue, the open count and the checks are
 * ours (ourSubject), so the only difference from the real worker is the worker itself.
 */
export function ceilingSubject(o: CeilingOptions): SubjectFactory {
  return (db: BenchDatabase): Subject => {
    const base = ourSubject({ label: o.label })(db);
    const clients: pg.Client[] = [];
    let loops: Promise<void> | undefined;
    let failure: Error | undefined;

    const loop = async (client: pg.Client, owner: string) => {
      for (;;) {
        const claimed = await client.query<{ id: string }>(
          `SELECT id FROM job_queue_claim($1, '{noop}'::text[], '{}'::text[], '{}'::int[], $2::int, 30000::float8, true)`,
          [owner, o.batch],
        );
        if (!claimed.rows.length) return;
        const ids = claimed.rows.map((r) => Number(r.id));
        for (const id of ids) ExecutionLog.current.record(id);
        await client.query(`SELECT kind, job FROM job_queue_complete($1, $2::bigint[], $3::text[], false)`, [
          owner,
          ids,
          ids.map(() => 'null'),
        ]);
      }
    };

    return {
      ...base,
      label: o.label,
      async startWorker() {
        for (let i = 0; i < o.connections; i++) {
          const client = new pg.Client({ connectionString: db.location });
          await client.connect();
          clients.push(client);
        }
        loops = Promise.all(clients.map((c, i) => loop(c, `ceiling-${i}`))).then(
          () => undefined,
          (err: Error) => void (failure = err),
        );
      },
      async open() {
        if (failure) throw failure;
        return base.open();
      },
      executions: async () => ExecutionLog.current.snapshot(),
      allStarted: (expected) => ExecutionLog.current.distinct >= expected,
      async close() {
        await loops;
        await Promise.all(clients.map((c) => c.end()));
        await base.close();
      },
    };
  };
}
