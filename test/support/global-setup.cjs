/**
 * Runs once before the suite:
 * 1. probes PostgreSQL and MariaDB. Outside CI an unreachable server skips that dialect with a
 *    loud notice; with CI=true it fails the run, because CI must prove every dialect.
 * 2. compiles lib/ and test/workers/ to dist/, for the specs that start real worker processes.
 */
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { PG_URL, MYSQL_URL, ALL_DIALECTS } = require('./test-env.cjs');

async function probePostgres() {
  const { Client } = require('pg');
  const client = new Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  await client.query('SELECT 1');
  await client.end();
}

async function probeMysql() {
  const mysql = require('mysql2/promise');
  const conn = await mysql.createConnection({ uri: MYSQL_URL, connectTimeout: 3000 });
  await conn.query('SELECT 1');
  await conn.end();
}

module.exports = async function globalSetup() {
  const wanted = (process.env.JQ_DIALECTS || ALL_DIALECTS.join(',')).split(',').filter(Boolean);
  const available = [];
  const probes = { postgres: probePostgres, mysql: probeMysql, sqlite: async () => undefined };
  for (const dialect of wanted) {
    try {
      await probes[dialect]();
      available.push(dialect);
    } catch (err) {
      const line = `!!! ${dialect} unreachable (${err.code || err.message}); its integration specs are SKIPPED.`;
      if (process.env.CI === 'true') {
        throw new Error(`${line.replace('SKIPPED', 'required under CI=true')} Start the server (see TOOLCHAIN.md).`);
      }
      process.stderr.write(`\n${'!'.repeat(line.length)}\n${line}\n${'!'.repeat(line.length)}\n`);
    }
  }
  process.env.JQ_AVAILABLE_DIALECTS = available.join(',');
  process.env.PG_URL = PG_URL;
  process.env.MYSQL_URL = MYSQL_URL;
  process.env.JQ_WANTED_DIALECTS = wanted.join(',');

  const root = path.resolve(__dirname, '../..');
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
};
