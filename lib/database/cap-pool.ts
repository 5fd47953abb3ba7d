import type { DataSource } from 'typeorm';

/** The drivers' internals this reaches: pg-pool's limit and clients, mysql2's limit and connections. */
interface PoolInternals {
  master?: { options?: { max?: number }; totalCount?: number };
  pool?: { config?: { connectionLimit?: number }; _allConnections?: { length: number } };
}

/**
 * Lowers the pool's limit to the connections it has open, when the server refused it one more:
 * statements then wait for a pooled connection instead of asking for a new one and failing,
 * which at the edge of the server's capacity failed nearly every claim (every one that met
 * another statement in flight) and stalled the worker. `keep`: the fewest open connections that
 * can carry the work (PostgreSQL's LISTEN holds one for good). Returns the new limit, or
 * undefined when it left the pool as it was.
 */
export function capPoolAtOpen(dataSource: DataSource, keep: number): number | undefined {
  const driver = dataSource.driver as unknown as PoolInternals;
  const pg = driver.master;
  if (pg?.options && typeof pg.totalCount === 'number') {
    const open = pg.totalCount;
    if (open < keep || open >= (pg.options.max ?? Infinity)) return undefined;
    pg.options.max = open;
    return open;
  }
  const mysql = driver.pool;
  if (mysql?.config && mysql._allConnections) {
    const open = mysql._allConnections.length;
    if (open < keep || open >= (mysql.config.connectionLimit ?? Infinity)) return undefined;
    mysql.config.connectionLimit = open;
    return open;
  }
  return undefined;
}
