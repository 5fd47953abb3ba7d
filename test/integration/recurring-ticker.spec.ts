import { databaseNow } from '../../lib/database/database-now.sql';
import { sql } from '../../lib/database/sql';
import { tickerContact } from '../../lib/recurring/ticker.sql';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

const contact = { gapMs: 5_000, freshMs: 500, continuing: false };

/** The cluster's run of recurring ticks (`job_queue_ticker`), statement by statement; no process ticks here. */
describeDialects('recurring ticker row', (db) => {
  let app: QueueApp;
  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false });
  });
  afterAll(() => app.close());

  const contactAgo = async (ms: number, sinceAgo = ms) => {
    const now = (await databaseNow(app.db)).getTime();
    const t = (at: number) => app.db.dialect.timeParam(new Date(at));
    await app.db.run(sql`UPDATE job_queue_ticker SET last_contact_at = ${t(now - ms)}, ticking_since = ${t(now - sinceAgo)} WHERE name = 'recurring'`);
    return now;
  };
  const row = async () => (await app.rows(`SELECT name FROM job_queue_ticker`)).map((r) => String(r.name));
  const lastContact = async () => {
    const [r] = await app.db.run(sql`SELECT ${app.db.dialect.selectTime('last_contact_at')} AS c FROM job_queue_ticker`).then((x) => x.rows);
    return app.db.dialect.parseTime(r.c)!.getTime();
  };

  it('a contact within the gap goes on with the run; past the gap, or on a fresh table, a run starts now', async () => {
    // The migration's row: contact long ago, so the first tick starts a run.
    const first = await tickerContact(app.db, contact);
    const now = (await databaseNow(app.db)).getTime();
    expect(Math.abs(now - first.getTime())).toBeLessThan(2_000);

    // Ticked 3 s ago, running for a minute: the run goes on, and this contact is written.
    let at = await contactAgo(3_000, 60_000);
    expect((await tickerContact(app.db, contact)).getTime()).toBe(at - 60_000);
    expect(await lastContact()).toBeGreaterThanOrEqual(at - 50);

    // Ticked 6 s ago: a break, a new run from now.
    at = await contactAgo(6_000, 60_000);
    const fresh = (await tickerContact(app.db, contact)).getTime();
    expect(fresh).toBeGreaterThanOrEqual(at - 50);
    expect(await row()).toEqual(['recurring']);
  });

  it('a process that has itself ticked without a break goes on with the run, however old the contact (its last transaction was long)', async () => {
    const at = await contactAgo(8_000, 60_000);
    expect((await tickerContact(app.db, { ...contact, continuing: true })).getTime()).toBe(at - 60_000);
    expect(await lastContact()).toBeGreaterThanOrEqual(at - 50);
  });

  it('a contact newer than freshMs is only read: the row keeps its contact time', async () => {
    const at = await contactAgo(100, 30_000);
    expect((await tickerContact(app.db, contact)).getTime()).toBe(at - 30_000);
    expect(await lastContact()).toBe(at - 100);
  });

  it('the row deleted by hand is put back as a run that starts now, once, by contacts racing for it', async () => {
    await app.db.run(sql`DELETE FROM job_queue_ticker`);
    const before = (await databaseNow(app.db)).getTime();
    const since = await Promise.all(Array.from({ length: 8 }, () => tickerContact(app.db, contact)));
    for (const s of since) expect(s.getTime()).toBeGreaterThanOrEqual(before - 50);
    expect(new Set(since.map((s) => s.getTime())).size).toBe(1);
    expect(await row()).toEqual(['recurring']);
  });
});
