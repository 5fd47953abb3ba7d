import type { DataSource } from 'typeorm';

interface PgPoolClient {
  on(event: 'error', listener: (err: Error) => void): unknown;
}

interface PgPool {
  on(event: 'connect', listener: (client: PgPoolClient) => void): unknown;
  _clients?: PgPoolClient[];
}

/**
 * PostgreSQL: gives every client of the DataSource's pool an `error` listener of its own, for
 * its whole life. pg-pool listens only while a client is idle, and TypeORM's
 * `obtainMasterConnection` adds none: a client handed out is unheard until its borrower's code
 * runs, a few microtasks later. A server that ends the connection in the same packet that
 * completed it (a restart, a failover, `pg_terminate_backend`, a dropped database: "terminating
 * connection due to administrator command") made pg emit `error` in between, and an unheard
 * `error` ends the process. The listener does nothing else: the failed statement reports the
 * error, and pg-pool drops a client that is no longer queryable when it comes back.
 */
export function hearClientErrors(dataSource: DataSource): void {
  const pool = (dataSource.driver as unknown as { master?: PgPool }).master;
  if (!pool || typeof pool.on !== 'function' || heard.has(pool)) return;
  // Once per pool: queues that share a DataSource would otherwise stack one 'connect' listener
  // each (Node warns past ten) and give every client one more listener per queue.
  heard.add(pool);
  const hear = (client: PgPoolClient) => client.on('error', ignore);
  pool.on('connect', hear); // emitted by pg-pool before the new client is handed out
  for (const client of pool._clients ?? []) hear(client); // those TypeORM's initialize opened
}

const heard = new WeakSet<PgPool>();

function ignore(): void {}
