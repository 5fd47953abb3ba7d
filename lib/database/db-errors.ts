/** Classifies driver errors, unwrapping TypeORM's QueryFailedError. */

interface DriverErrorLike {
  code?: string | number;
  errno?: number;
  message?: string;
}

function driverError(err: unknown): DriverErrorLike {
  const e = err as { driverError?: DriverErrorLike } & DriverErrorLike;
  return e?.driverError ?? e ?? {};
}

/** Lock conflicts that a fresh attempt of the same transaction resolves. */
export function isTransientConflict(err: unknown): boolean {
  const e = driverError(err);
  return (
    e.code === '40P01' || // postgres deadlock_detected
    e.code === '40001' || // postgres serialization_failure
    e.code === '55P03' || // postgres lock_not_available
    e.errno === 1213 || // mysql ER_LOCK_DEADLOCK
    e.errno === 1205 || // mysql ER_LOCK_WAIT_TIMEOUT
    isSqliteBusy(err)
  );
}

export function isSqliteBusy(err: unknown): boolean {
  const code = driverError(err).code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

export function isUniqueViolation(err: unknown): boolean {
  const e = driverError(err);
  return (
    e.code === '23505' || // postgres
    e.errno === 1062 || // mysql ER_DUP_ENTRY
    e.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

/** The connection or server went away; the work may be retried once it is back. */
export function isConnectionError(err: unknown): boolean {
  const e = driverError(err);
  const code = String(e.code ?? '');
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH'].includes(code) ||
    ['57P01', '57P02', '57P03', '08000', '08003', '08006', '08001', '08004'].includes(code) ||
    // A new connection refused for capacity (the server's or the role's connection limit): the
    // statement that needed it waits like any outage; the job it carried is not at fault.
    isCapacityRefusal(err) ||
    ['PROTOCOL_CONNECTION_LOST', 'ER_SERVER_SHUTDOWN', 'ECONNCLOSED'].includes(code) ||
    code === 'DATABASE_NO_ANSWER' || // DatabaseNoAnswerError: no answer in time, the connection closed
    e.errno === 1927 || // mariadb ER_CONNECTION_KILLED
    // A new connection's handshake unanswered within its deadline (see handshake-deadline.ts), and
    // pg-pool's wait for a free client past a shared DataSource's connectionTimeoutMillis.
    isHandshakeTimeout(err) ||
    e.message === 'timeout exceeded when trying to connect' ||
    /Connection terminated|connection is in closed state|Can't add new command when connection is in closed state|Cannot use a pool after calling end/i.test(
      e.message ?? String((err as Error)?.message ?? ''),
    )
  );
}

/**
 * A new connection given up because its handshake went unanswered: pg's "timeout expired" (its
 * connectionTimeoutMillis, see handshake-deadline.ts), mysql2's "connect ETIMEDOUT" (connectTimeout).
 */
export function isHandshakeTimeout(err: unknown): boolean {
  const e = driverError(err);
  return e.code === 'ETIMEDOUT' || e.message === 'timeout expired';
}

/** A new connection the server refused for capacity: its connection limit, or the role's / user's. */
export function isCapacityRefusal(err: unknown): boolean {
  const e = driverError(err);
  return (
    e.code === '53300' || // postgres too_many_connections (max_connections, a role's or database's CONNECTION LIMIT)
    e.code === 'ER_CON_COUNT_ERROR' || // mysql 1040, max_connections
    e.errno === 1203 || // mysql ER_TOO_MANY_USER_CONNECTIONS
    e.errno === 1226 // mysql ER_USER_LIMIT_REACHED (max_user_connections)
  );
}
