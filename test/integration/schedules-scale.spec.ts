import type { RecurringArgs } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp } from '../support/queue-app';
import { eventually } from '../support/wait';
import { WorkerProcess } from '../support/worker-process';

const SCHEDULES = 300;
const WORKERS = 2;

describeDialects(`recurring jobs at tenant scale (${SCHEDULES} schedules, ${WORKERS} processes)`, (db) => {
  it('every schedule gets each of its slots once, all due in the same second', async () => {
    const types = Array.from({ length: SCHEDULES }, (_, i) => `tenant-${i}`);
    const app = await startQueueApp(db, { worker: false, externalTypes: types });
    const schedules = types.map((name) => ({ name, cron: '*/2 * * * * *', group: name }));
    const workers = Array.from({ length: WORKERS }, () => new WorkerProcess('recurring.worker', { ...db.options(), schedules }));
    try {
      await Promise.all(workers.map((w) => w.waitFor('ready', 120_000)));
      // Five slots of the last schedule: by then every schedule has had at least four.
      await eventually('5 slots of every schedule', async () => (await app.count(`type = 'tenant-${SCHEDULES - 1}'`)) >= 5, 120_000, 200);
      for (const w of workers) w.send('stop');
      await Promise.all(workers.map((w) => w.exited));

      const rows = await app.rows(`SELECT type, args FROM jobs`);
      const slots = new Map<string, number[]>();
      for (const r of rows) {
        const args = (typeof r.args === 'string' ? JSON.parse(r.args) : r.args) as RecurringArgs;
        slots.set(String(r.type), [...(slots.get(String(r.type)) ?? []), Date.parse(args.slot)]);
      }
      expect(slots.size).toBe(SCHEDULES);
      let total = 0;
      for (const [type, list] of slots) {
        list.sort((a, b) => a - b);
        total += list.length;
        expect([type, list.length >= 4]).toEqual([type, true]);
        for (let i = 1; i < list.length; i++) expect([type, list[i] - list[i - 1]]).toEqual([type, 2_000]);
      }
      process.stdout.write(`[${db.dialect}] ${SCHEDULES} schedules x ${WORKERS} processes: ${total} jobs, each slot once, none missing\n`);
    } finally {
      workers.forEach((w) => w.dead || w.kill());
      await app.close();
    }
  });
});
