import { DatabaseConnectionError, JobQueueError } from '../../lib';
import { describeDatabaseTarget } from '../../lib/database/database-target';
import { isHandshakeTimeout } from '../../lib/database/db-errors';

describe('describeDatabaseTarget: where a start-up tried to connect, for its error', () => {
  it('names the server, host, port and database of a url, never its user or password', () => {
    const text = describeDatabaseTarget({ type: 'postgres', url: 'postgres://app:s3cret%21@db.internal:6543/jobs%20prod?sslmode=require' });
    expect(text).toBe('PostgreSQL at db.internal:6543, database jobs prod');
    expect(text).not.toMatch(/app|s3cret/);
    expect(describeDatabaseTarget({ type: 'mysql', url: 'mysql://root:pw@10.0.0.5/test' })).toBe('MySQL/MariaDB at 10.0.0.5:3306, database test');
  });

  it('falls back to the separate options, and their defaults', () => {
    expect(describeDatabaseTarget({ type: 'postgres', host: 'pg', port: 5433, database: 'app' })).toBe('PostgreSQL at pg:5433, database app');
    expect(describeDatabaseTarget({ type: 'postgres' })).toBe('PostgreSQL at localhost:5432');
    expect(describeDatabaseTarget({ type: 'mariadb', socketPath: '/run/mysqld/mysqld.sock', database: 'q' })).toBe('MySQL/MariaDB at the socket /run/mysqld/mysqld.sock, database q');
    // A url without a database keeps the separate option's, as TypeORM does.
    expect(describeDatabaseTarget({ type: 'postgres', url: 'postgres://h:1', database: 'd' })).toBe('PostgreSQL at h:1, database d');
    expect(describeDatabaseTarget({ type: 'postgres', url: 'postgresql:///app?host=/var/run/postgresql' })).toBe('PostgreSQL at /var/run/postgresql:5432, database app');
  });

  it('SQLite: the file, or memory', () => {
    expect(describeDatabaseTarget({ type: 'better-sqlite3', database: './jobs.sqlite' })).toBe('the SQLite file ./jobs.sqlite');
    expect(describeDatabaseTarget({ type: 'better-sqlite3', database: Buffer.alloc(0) })).toBe('the SQLite file (in memory)');
  });

  it('a url that does not parse is not echoed (it may hold a password)', () => {
    expect(describeDatabaseTarget({ type: 'postgres', url: 'postgres://user:pa ss@[bad' })).toBe('PostgreSQL (a url that does not parse)');
  });
});

describe('DatabaseConnectionError', () => {
  it("says where and what the driver said, keeps the driver's error as cause", () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const err = new DatabaseConnectionError('PostgreSQL at 127.0.0.1:1, database x', cause);
    expect(err).toBeInstanceOf(JobQueueError);
    expect(err.code).toBe('DATABASE_CONNECTION_FAILED');
    expect(err.message).toBe('Could not connect to PostgreSQL at 127.0.0.1:1, database x: connect ECONNREFUSED 127.0.0.1:1.');
    expect(err.cause).toBe(cause);
  });

  it('a handshake left unanswered names the deadline that gave it up; SQLite is opened, not connected to', () => {
    expect(new DatabaseConnectionError('PostgreSQL at h:1', new Error('timeout expired'), 2_000).message).toBe(
      "Could not connect to PostgreSQL at h:1: timeout expired (no answer within 2000 ms: queryTimeoutMs, at most 10 s, bounds a new connection's handshake).",
    );
    // Not the queue's deadline (a shared DataSource): no claim about it.
    expect(new DatabaseConnectionError('PostgreSQL at h:1', new Error('timeout expired')).message).toBe('Could not connect to PostgreSQL at h:1: timeout expired.');
    expect(new DatabaseConnectionError('the SQLite file /x', new Error('file is not a database')).message).toBe('Could not open the SQLite file /x: file is not a database.');
  });

  it("isHandshakeTimeout: pg's and mysql2's handshake deadlines, not a refusal or a statement's", () => {
    expect(isHandshakeTimeout(new Error('timeout expired'))).toBe(true);
    expect(isHandshakeTimeout(Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' }))).toBe(true);
    expect(isHandshakeTimeout(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))).toBe(false);
    expect(isHandshakeTimeout(new Error('Query read timeout'))).toBe(false);
  });
});
