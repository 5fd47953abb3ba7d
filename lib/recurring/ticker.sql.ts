import { isUniqueViolation } from '../database/db-errors';
import { sql } from '../database/sql';
import type { SqlExecutor } from '../database/sql-executor';

export interface TickerContact {
  /** Contacts at most this far apart, from any process, belong to one run. */
  gapMs: number;
  /** A contact this recent is only read. */
  freshMs: number;
  /**
   * The calling process has itself ticked without a break of `gapMs` (its last transaction
   * included): it goes on with the run whatever the row says. A single process whose tick
   * transaction took longer than the gap wrote no contact meanwhile, and is not a restart.
   */
  continuing: boolean;
}

/**
 * The cluster's run of recurring ticks (migration `job_queue_ticker`): every tick of every
 * process calls this, and gets since when some process has been ticking without a break (the
 * database's clock). A contact newer than `freshMs` is only read: the row is written about once
 * per `freshMs` for the whole cluster, not once per tick per process.
 */
export async function tickerContact(db: SqlExecutor, { gapMs, freshMs, continuing }: TickerContact): Promise<Date> {
  const d = db.dialect;
  const { rows } = await db.run(sql`SELECT ${d.selectTime('ticking_since')} AS since,
    CASE WHEN last_contact_at >= ${d.addMs(d.now(), -freshMs)} THEN 1 ELSE 0 END AS fresh
    FROM job_queue_ticker WHERE name = 'recurring'`);
  if (rows.length && Number(rows[0].fresh) === 1) return d.parseTime(rows[0].since)!;
  // ticking_since first: MySQL evaluates SET left to right, with the values already assigned.
  // A contact older than the gap (or none yet) starts a new run; after this one no other process
  // can start another within the gap, so the read that follows sees this run's start.
  const restart = continuing ? sql`` : sql`ticking_since = CASE WHEN last_contact_at < ${d.addMs(d.now(), -gapMs)} THEN ${d.now()} ELSE ticking_since END,`;
  const { affected } = await db.run(sql`UPDATE job_queue_ticker SET ${restart} last_contact_at = ${d.now()} WHERE name = 'recurring'`);
  if (!affected) {
    // No row (deleted by hand): put it back, as a run that starts now. A process that raced this
    // one to it already did.
    await db
      .run(sql`INSERT INTO job_queue_ticker (name, ticking_since, last_contact_at) VALUES ('recurring', ${d.now()}, ${d.now()})`)
      .catch((err: unknown) => {
        if (!isUniqueViolation(err)) throw err;
      });
  }
  const again = await db.run(sql`SELECT ${d.selectTime('ticking_since')} AS since FROM job_queue_ticker WHERE name = 'recurring'`);
  return d.parseTime(again.rows[0].since)!;
}
