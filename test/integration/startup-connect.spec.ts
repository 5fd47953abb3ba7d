import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { DatabaseConnectionError, JobQueueError } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp } from '../support/queue-app';

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** `url` with its parts changed; a password given is one no error may repeat. */
function altered(url: string, change: { port?: number; database?: string; user?: string; password?: string }): string {
  const u = new URL(url);
  if (change.port !== undefined) u.port = String(change.port);
  if (change.database !== undefined) u.pathname = `/${change.database}`;
  if (change.user !== undefined) u.username = change.user;
  if (change.password !== undefined) u.password = change.password;
  return u.toString();
}

async function failedStart(options: Record<string, unknown>, db: Parameters<typeof startQueueApp>[0]): Promise<DatabaseConnectionError> {
  const err = await startQueueApp(db, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DatabaseConnectionError);
  expect(err).toBeInstanceOf(JobQueueError);
  const failed = err as DatabaseConnectionError;
  expect(failed.code).toBe('DATABASE_CONNECTION_FAILED');
  expect(failed.message).not.toContain('n0t-in-any-log');
  // The driver's own error (an Error of the driver's realm, hence no instanceof here).
  expect(typeof (failed.cause as { message?: unknown }).message).toBe('string');
  process.stdout.write(`[${db.dialect}] ${failed.message}\n`);
  return failed;
}

/**
 * A start-up that cannot open its database fails with one typed error that says where it tried
 * (server, host, port, database; never the user or password) and what the driver said, with the
 * driver's error as `cause`: a refused port, an unknown database, a login the server turns down.
 */
describeDialects(
  'start-up against a database it cannot open',
  (db) => {
    it('a refused port, an unknown database, an unknown user: DatabaseConnectionError naming where, the driver error as cause', async () => {
      const port = await closedPort();
      const refused = await failedStart({ url: altered(db.location, { port, password: 'n0t-in-any-log' }) }, db);
      expect(refused.message).toContain(`at 127.0.0.1:${port}, database ${db.name}: connect ECONNREFUSED`);
      expect((refused.cause as { code?: string }).code).toBe('ECONNREFUSED');

      const unknown = await failedStart({ url: altered(db.location, { database: `${db.name}_missing` }) }, db);
      expect(unknown.message).toContain(`database ${db.name}_missing: `);
      expect((unknown.cause as { code?: string }).code).toBe(db.dialect === 'postgres' ? '3D000' : 'ER_BAD_DB_ERROR');

      const stranger = await failedStart({ url: altered(db.location, { user: 'jq_no_such_user', password: 'n0t-in-any-log' }) }, db);
      expect(stranger.message).toContain('jq_no_such_user'); // the server's own words name the user; the password stays out
      expect(String((stranger.cause as { code?: string }).code)).toMatch(/^(28000|28P01|ER_ACCESS_DENIED_ERROR|ER_ACCESS_DENIED_NO_PASSWORD_ERROR)$/);
    }, 60_000);

    it("the application's own DataSource, not yet initialized, fails the same way and stays the application's", async () => {
      const port = await closedPort();
      const appDs = new DataSource({ type: db.dialect, url: altered(db.location, { port, password: 'n0t-in-any-log' }) } as DataSourceOptions);
      const failed = await failedStart({ url: undefined, dataSource: appDs }, db);
      expect(failed.message).toContain(`at 127.0.0.1:${port}, database ${db.name}: connect ECONNREFUSED`);
      expect(appDs.isInitialized).toBe(false);
    }, 60_000);
  },
  ['postgres', 'mysql'],
);

describeDialects(
  'start-up against a file that is not a database',
  (db) => {
    it('DatabaseConnectionError naming the file, the file left as it was', async () => {
      const file = join(dirname(db.location), 'not-a-database.sqlite');
      const content = 'notes, not a database\n'.repeat(100);
      writeFileSync(file, content);
      const failed = await failedStart({ url: file }, db);
      expect(failed.message).toBe(`Could not open the SQLite file ${file}: file is not a database.`);
      expect(readFileSync(file, 'utf8')).toBe(content);
    }, 60_000);
  },
  ['sqlite'],
);
