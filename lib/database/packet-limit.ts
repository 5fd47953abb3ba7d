import { InvalidOptionError } from '../errors';

const MiB = 1024 * 1024;
/** Room in a finalize statement for everything but the results (ids, SQL text, other columns). */
const STATEMENT_OVERHEAD = MiB;

/**
 * The largest result a MySQL/MariaDB server with this `max_allowed_packet` accepts in a finalize
 * statement: the statement is one packet, and escaping can double a JSON string in it (every
 * `"` becomes `\"`). A finalize batch holds at most `maxResultBytes` of results, so this bound
 * holds for whole batches too.
 */
export function largestResultFor(maxAllowedPacket: number): number {
  return Math.max(1, Math.floor((maxAllowedPacket - STATEMENT_OVERHEAD) / 2));
}

/**
 * Checks `maxResultBytes` against the server's `max_allowed_packet` at start-up. A value the
 * application set that does not fit fails with the option's name; the default is lowered to fit
 * (servers configured below the 16 MiB MariaDB default), and the returned value is the one to use.
 */
export function fitResultLimit(maxResultBytes: number, isDefault: boolean, maxAllowedPacket: number): number {
  const largest = largestResultFor(maxAllowedPacket);
  if (maxResultBytes <= largest) return maxResultBytes;
  if (isDefault) return largest;
  throw new InvalidOptionError(
    'maxResultBytes',
    `at most ${largest} on this server: its max_allowed_packet is ${maxAllowedPacket} bytes and escaping can double a result ` +
      `in the statement (raise max_allowed_packet on the server, or lower maxResultBytes)`,
    maxResultBytes,
  );
}
