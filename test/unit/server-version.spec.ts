import { UnsupportedDatabaseError } from '../../lib';
import { assertSupportedServer, parseServerVersion } from '../../lib/database/server-version';

describe('server version gate', () => {
  it.each([
    ['mysql', '8.0.36', 'MySQL', true],
    ['mysql', '8.0.0', 'MySQL', false],
    ['mysql', '8.0.3-dmr', 'MySQL', false], // no JSON_TABLE before 8.0.4
    ['mysql', '8.0.4', 'MySQL', true],
    ['mysql', '5.7.44-log', 'MySQL', false],
    ['mysql', '10.11.19-MariaDB-0+deb12u1', 'MariaDB', true],
    ['mysql', '10.6.0-MariaDB', 'MariaDB', true],
    ['mysql', '10.5.23-MariaDB', 'MariaDB', false],
    ['postgres', '15.20 (Debian 15.20-0+deb12u1)', 'PostgreSQL', true],
    ['postgres', '11.22', 'PostgreSQL', false],
    ['sqlite', '3.53.2', 'SQLite', true],
    ['sqlite', '3.31.1', 'SQLite', false],
  ] as const)('%s %s', (dialect, reported, product, ok) => {
    const info = parseServerVersion(dialect, reported);
    expect(info.product).toBe(product);
    if (ok) expect(() => assertSupportedServer(info)).not.toThrow();
    else expect(() => assertSupportedServer(info)).toThrow(UnsupportedDatabaseError);
  });

  it('says what is needed', () => {
    expect(() => assertSupportedServer(parseServerVersion('mysql', '10.5.1-MariaDB'))).toThrow(
      /MariaDB 10\.5\.1 is not supported: nestjs-sql-job-queue needs MariaDB 10\.6\.0 or newer/,
    );
  });
});
