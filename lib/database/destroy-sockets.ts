import type { DataSource } from 'typeorm';

interface Destroyable {
  destroy(): void;
}

/** The drivers' internals this reaches: pg-pool's clients and mysql2's pool connections. */
interface DriverInternals {
  master?: { _clients?: Array<{ connection?: { stream?: Destroyable } }> };
  pool?: { _allConnections?: { length: number; get(i: number): { stream?: Destroyable } } };
}

/**
 * Closes the sockets of every pooled connection at once, busy or idle, without a word to the
 * server. For a server that stopped answering: the pools' own `end()` sends it a goodbye and
 * waits for the reply (and for the statements in flight), which never comes. Statements still
 * in flight then fail with a connection error. Returns how many sockets it closed.
 */
export function destroySockets(dataSource: DataSource): number {
  const driver = dataSource.driver as unknown as DriverInternals;
  const streams: Destroyable[] = [];
  for (const client of driver.master?._clients ?? []) if (client.connection?.stream) streams.push(client.connection.stream);
  const all = driver.pool?._allConnections;
  for (let i = 0; all && i < all.length; i++) {
    const stream = all.get(i).stream;
    if (stream) streams.push(stream);
  }
  for (const stream of streams) stream.destroy();
  return streams.length;
}
