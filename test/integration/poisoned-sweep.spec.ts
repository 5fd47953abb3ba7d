import { SweepsService } from '../../lib/sweeps/sweeps.service';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';
import { strandJobs } from '../support/stranded-jobs';

/**
 * One row the database refuses must not stop a sweep for every row after it (issue 18): the
 * reclaim and timeout sweeps take 200 rows per transaction, in id order, so a refused row at the
 * front used to fail every run. 450 stranded jobs, the first of them refused by a trigger.
 */
const JOBS = 450;

async function installRefusingTrigger(app: QueueApp): Promise<void> {
  const d = app.db.dialect.name;
  if (d === 'postgres') {
    await app.rows(`CREATE OR REPLACE FUNCTION refuse_sweep() RETURNS trigger AS $$
      BEGIN
        IF OLD.args LIKE '%poison-sweep%' AND NEW.state IS DISTINCT FROM OLD.state THEN
          RAISE EXCEPTION 'row % refused by the test trigger', OLD.id;
        END IF;
        RETURN NEW;
      END $$ LANGUAGE plpgsql`);
    await app.rows(`CREATE TRIGGER jobs_refuse_sweep BEFORE UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION refuse_sweep()`);
  } else if (d === 'mysql') {
    await app.rows(`CREATE TRIGGER jobs_refuse_sweep BEFORE UPDATE ON jobs FOR EACH ROW
      BEGIN
        IF OLD.args LIKE '%poison-sweep%' AND NEW.state <> OLD.state THEN
          SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'row refused by the test trigger';
        END IF;
      END`);
  } else {
    await app.rows(`CREATE TRIGGER jobs_refuse_sweep BEFORE UPDATE ON jobs
      WHEN OLD.args LIKE '%poison-sweep%' AND NEW.state <> OLD.state
      BEGIN SELECT RAISE(ABORT, 'row refused by the test trigger'); END`);
  }
}

describeDialects(`poisoned sweep: ${JOBS} stranded jobs, the first refused by the database`, (db) => {
  let app: QueueApp;
  let sweeps: SweepsService;

  beforeAll(async () => {
    // No worker: the sweeps run only when the test calls them.
    app = await startQueueApp(db, { worker: false, externalTypes: ['stranded'] });
    sweeps = app.module.get(SweepsService);
  });
  afterAll(async () => {
    await app?.close();
  });
  beforeEach(() => resetTables(app));

  async function strand(how: 'expired lease' | 'overdue'): Promise<{ poison: number; others: number[] }> {
    const nodes = [{ ref: 'poison', type: 'stranded', args: { mark: 'poison-sweep' }, maxAttempts: 3 }];
    for (let i = 0; i < JOBS - 1; i++) nodes.push({ ref: `j${i}`, type: 'stranded', args: { mark: `j${i}` }, maxAttempts: 3 });
    const ids = await app.queue.enqueueGraph(nodes);
    await strandJobs(app.db, how);
    await installRefusingTrigger(app);
    return { poison: ids.poison, others: Object.entries(ids).filter(([ref]) => ref !== 'poison').map(([, id]) => id) };
  }

  it.each([
    ['reclaim', 'expired lease', /^lease expired: worker dead-worker/],
    ['timeout', 'overdue', /^timed out after 1000 ms \(found by the timeout sweep/],
  ] as const)('the %s sweep moves every other row in one run and leaves the refused one', async (sweep, how, error) => {
    const { poison, others } = await strand(how);
    try {
      const moved = await (sweep === 'reclaim' ? sweeps.reclaim() : sweeps.failOverdue());
      expect(moved).toBe(JOBS); // the refused row counts as handled, so the run went past it
      const rows = await app.rows(`SELECT id, state, last_error, lease_owner FROM jobs`);
      const byId = new Map(rows.map((r) => [Number(r.id), r]));
      const wrong = others.filter((id) => byId.get(id)!.state !== 'ready' || !error.test(String(byId.get(id)!.last_error)) || byId.get(id)!.lease_owner !== null);
      expect(wrong).toEqual([]);
      expect(byId.get(poison)).toMatchObject({ state: 'running' }); // left as it was
      // The next run finds only the refused row, and still moves nothing else.
      expect(await (sweep === 'reclaim' ? sweeps.reclaim() : sweeps.failOverdue())).toBe(1);
    } finally {
      await app.rows(app.db.dialect.name === 'postgres' ? `DROP TRIGGER IF EXISTS jobs_refuse_sweep ON jobs` : `DROP TRIGGER IF EXISTS jobs_refuse_sweep`);
    }
  });
});
