import type { DataSource } from 'typeorm';

/** mysql2's own bound on a new connection's handshake, kept as the longest wait on both dialects. */
export const MAX_HANDSHAKE_MS = 10_000;

/**
 * How long a new connection may take to complete its handshake before it is given up:
 * `queryTimeoutMs`, at most MAX_HANDSHAKE_MS; none when statements have no deadline either.
 */
export function handshakeDeadlineMs(queryTimeoutMs: number): number | undefined {
  return queryTimeoutMs > 0 ? Math.min(queryTimeoutMs, MAX_HANDSHAKE_MS) : undefined;
}

type PgClientClass = new (config: Record<string, unknown>) => object;

/**
 * PostgreSQL: a new connection whose server never answers its handshake (a balancer or address
 * in front of a server that is gone) is given up after `ms`. pg waits for it for good by
 * default, and the caller (a claim, a finalize, a renewal) with it, holding a pool slot.
 * pg-pool hands one `connectionTimeoutMillis` both to each client (the handshake) and to its
 * own queue of callers waiting for a free client; only the first is meant, so the deadline goes
 * to a client class of the driver's own, not to the pool. Call before the DataSource initializes.
 */
export function boundPgHandshakes(dataSource: DataSource, ms: number | undefined): void {
  const pg = (dataSource.driver as unknown as { postgres?: { Client?: PgClientClass } }).postgres;
  if (ms === undefined || !pg?.Client) return;
  const Base = pg.Client;
  class HandshakeBoundClient extends Base {
    constructor(config: Record<string, unknown>) {
      super({ ...config, connectionTimeoutMillis: ms });
    }
  }
  // TypeORM reads `extra` into the pool's options when it creates the pool, in initialize().
  const options = dataSource.options as { extra?: Record<string, unknown> };
  Object.assign(dataSource.options, { extra: { ...options.extra, Client: HandshakeBoundClient } });
}
