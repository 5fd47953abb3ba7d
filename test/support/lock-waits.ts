import type { QueueApp } from './queue-app';

/**
 * How many statements of this app's database wait for a row lock right now (PostgreSQL, MySQL).
 * Other specs share the server, so only this database's sessions count.
 *
 * MariaDB refreshes information_schema.innodb_trx only when nobody read it for 100 ms, and a read
 * inside that window returns the old snapshot (and restarts the window): a check made right
 * after another saw the waits of the moment before (retry-race.spec's cases, ~20 ms apart, went
 * on before their transaction had locked anything; .scratch/trx-cache.cjs shows the stale reads).
 * So each read comes 150 ms after the last one this counter made; poll it no faster. `appOf`:
 * the app is usually started in a beforeAll, after the counter is made.
 */
export function lockWaitCounter(appOf: () => QueueApp): () => Promise<number> {
  let lastRead = 0;
  return async () => {
    const app = appOf();
    const postgres = app.db.dialect.name === 'postgres';
    if (!postgres) await new Promise((r) => setTimeout(r, Math.max(0, lastRead + 150 - Date.now())));
    const rows = await app.rows(
      postgres
        ? `SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`
        : `SELECT COUNT(*) AS n FROM information_schema.innodb_trx t JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id
           WHERE t.trx_state = 'LOCK WAIT' AND p.db = DATABASE()`,
    );
    lastRead = Date.now();
    return Number(rows[0].n);
  };
}
