import type { DataSource } from 'typeorm';

/** The drivers' internals this reaches: pg-pool's limit and clients, mysql2's limit and connections. */
interface PoolInternals {
  master?: { options?: { max?: number }; totalCount?: number };
  pool?: { config?: { connectionLimit?: number }; _allConnections?: { length: number } };
}

/** The pool's connections open and its limit, and a way to set the limit; undefined without a pool (SQLite). */
export interface PoolGauge {
  open: number;
  limit: number;
  setLimit(limit: number): void;
}

export function poolGauge(dataSource: DataSource): PoolGauge | undefined {
  const driver = dataSource.driver as unknown as PoolInternals;
  const pg = driver.master;
  if (pg?.options && typeof pg.totalCount === 'number') {
    const options = pg.options;
    return { open: pg.totalCount, limit: options.max ?? Infinity, setLimit: (limit) => void (options.max = limit) };
  }
  const mysql = driver.pool;
  if (mysql?.config && mysql._allConnections) {
    const config = mysql.config;
    return { open: mysql._allConnections.length, limit: config.connectionLimit ?? Infinity, setLimit: (limit) => void (config.connectionLimit = limit) };
  }
  return undefined;
}

/**
 * Lowers the pool's limit to the connections it has open, when the server refused it one more:
 * statements then wait for a pooled connection instead of asking for a new one and failing,
 * which at the edge of the server's capacity failed nearly every claim (every one that met
 * another statement in flight) and stalled the worker. `keep`: the fewest open connections that
 * can carry the work (PostgreSQL's LISTEN holds one for good). Returns the limit the pool now
 * keeps to and the one it had (equal when another refusal lowered it already), or undefined
 * when too few connections are open to wait for.
 */
export function capPoolAtOpen(dataSource: DataSource, keep: number): { limit: number; was: number } | undefined {
  const pool = poolGauge(dataSource);
  if (!pool || pool.open < keep) return undefined;
  if (pool.open >= pool.limit) return { limit: pool.limit, was: pool.limit };
  pool.setLimit(pool.open);
  return { limit: pool.open, was: pool.limit };
}
