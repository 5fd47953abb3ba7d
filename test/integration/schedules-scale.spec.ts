import { Injectable } from '@nestjs/common';
import { JobHandler, type RecurringArgs } from '../../lib';
import { sql } from '../../lib/database/sql';
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

const TENANTS = Number(process.env.TENANT_SCHEDULES ?? 10_000);
// Far below the time a tick takes to work through every tenant, so a slot late for that reason
// alone is seen as missed (and skipped: backfill 'none') unless lateness counts from the tick's start.
const GRACE_MS = 2_000;
const PERIOD_S = 10;

describeDialects(`${TENANTS} tenant schedules due at the same second (${WORKERS} processes)`, (db) => {
  it('each tenant gets the slot once, none skipped as missed, and the next slot too', async () => {
    const app = await startQueueApp(db, { worker: false, externalTypes: ['refresh'] });
    // The workers' own schedule only gives them the handler of type `refresh`; it never falls due.
    const schedules = [{ name: 'refresh', cron: '0 0 1 1 *' }];
    const workers = Array.from({ length: WORKERS }, () => new WorkerProcess('recurring.worker', { ...db.options({ pollIntervalMs: 200 }), schedules }));
    try {
      // Rows as queue.schedule() stores them (one call each took 15–25 s for 10,000), not due yet.
      const later = '2100-01-01 00:00:00';
      for (let i = 0; i < TENANTS; i += 1_000) {
        const rows = Array.from({ length: Math.min(1_000, TENANTS - i) }, (_, k) => {
          const n = i + k;
          return `('tenant-${n}.refresh', '*/${PERIOD_S} * * * * *', 'UTC', 'refresh', '{"tenant":${n}}', 'none', ${GRACE_MS}, '{"group":"tenant-${n}"}', '${later}', '${later}', '${later}')`;
        });
        await app.rows(`INSERT INTO job_queue_schedules (name, cron, time_zone, job_type, args, backfill, misfire_grace_ms, job_options, next_run_at, created_at, updated_at)
          VALUES ${rows.join(', ')}`);
      }
      await Promise.all(workers.map((w) => w.waitFor('ready', 120_000)));
      // The next slot at least 2 s away, the same for every tenant.
      const slot = Math.ceil((Date.now() + 2_000) / (PERIOD_S * 1_000)) * PERIOD_S * 1_000;
      await app.db.run(sql`UPDATE job_queue_schedules SET next_run_at = ${app.db.dialect.timeParam(new Date(slot))} WHERE name LIKE 'tenant-%'`);
      const ofSlot = (at: number) => app.count(`job_key LIKE 'recurring:tenant-%:${new Date(at).toISOString()}'`);
      const waitMs = 60_000 + TENANTS * 10;
      // On a timeout, say what the workers logged (a failed tick, a missed slot) and how far it got.
      const explain = async (err: unknown) => {
        const logs = workers.flatMap((w) => [...w.messages.filter((m) => m.type === 'log').map((m) => String(m.line)), ...w.stderr]);
        throw new Error(`${(err as Error).message}; ${await ofSlot(slot)} of the first slot, ${await ofSlot(slot + PERIOD_S * 1_000)} of the next; worker logs:\n${logs.slice(-20).join('\n')}`);
      };
      await eventually(`every tenant's slot`, async () => (await ofSlot(slot)) === TENANTS, waitMs, 100).catch(explain);
      const firstMs = Date.now() - slot;
      const second = slot + PERIOD_S * 1_000;
      await eventually(`every tenant's next slot`, async () => (await ofSlot(second)) === TENANTS, waitMs + PERIOD_S * 1_000, 100).catch(explain);
      const secondMs = Date.now() - second;
      for (const w of workers) w.send('stop');
      await Promise.all(workers.map((w) => w.exited));

      // One job per tenant and slot (the key is unique; this checks none was written under another).
      const rows = await app.rows(`SELECT job_key FROM jobs WHERE type = 'refresh'`);
      const perTenant = new Map<string, number>();
      for (const r of rows) {
        const name = String(r.job_key).split(':')[1];
        perTenant.set(name, (perTenant.get(name) ?? 0) + 1);
      }
      expect(perTenant.size).toBe(TENANTS);
      expect([...perTenant.values()].filter((n) => n < 2)).toEqual([]);
      const missedWarnings = workers.flatMap((w) => w.messages).filter((m) => String(m.line ?? '').includes('misfireGraceMs'));
      expect(missedWarnings).toEqual([]);
      process.stdout.write(
        `[${db.dialect}] ${TENANTS} tenant schedules, ${WORKERS} processes: a slot's jobs all enqueued ${firstMs} ms after it, the next slot's ${secondMs} ms after it\n`,
      );
    } finally {
      workers.forEach((w) => w.dead || w.kill());
      await app.close();
    }
  }, 240_000 + TENANTS * 30);
});

@Injectable()
class CatchUp {
  @JobHandler('catch-up')
  async run(): Promise<null> {
    return null;
  }
}

const BACKFILLED = 12;

describeDialects(`${BACKFILLED} schedules catching up 1,000 slots each`, (db) => {
  it('every backfilled slot once, over several transactions (at most 5,000 jobs each)', async () => {
    const app = await startQueueApp(db, { pollIntervalMs: 200 }, [CatchUp]);
    try {
      // Down for an hour: each per-second schedule missed 3,600 slots and wants the latest 1,000.
      const from = new Date(Date.now() - 3_600_000);
      for (let i = 0; i < BACKFILLED; i++) {
        await app.queue.schedule({ name: `catch-up-${i}`, cron: '* * * * * *', type: 'catch-up', backfill: 1_000 });
      }
      await app.db.run(sql`UPDATE job_queue_schedules SET next_run_at = ${app.db.dialect.timeParam(from)} WHERE name LIKE 'catch-up-%'`);
      await eventually('the backfill', async () => (await app.count(`job_key LIKE 'recurring:catch-up-%' AND args LIKE '%"backfill":true%'`)) >= BACKFILLED * 1_000, 120_000, 200);
      const rows = await app.rows(`SELECT job_key, args FROM jobs WHERE type = 'catch-up'`);
      const backfilled = new Map<string, number>();
      for (const r of rows) {
        const args = (typeof r.args === 'string' ? JSON.parse(r.args) : r.args) as RecurringArgs;
        if (!args.backfill) continue;
        const name = String(r.job_key).split(':')[1];
        backfilled.set(name, (backfilled.get(name) ?? 0) + 1);
      }
      expect([...backfilled.values()]).toEqual(Array.from({ length: BACKFILLED }, () => 1_000));
    } finally {
      await app.close();
    }
  }, 180_000);
});
