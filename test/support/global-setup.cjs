/**
 * Runs once before the suite:
 * 1. probes PostgreSQL and MariaDB. Outside CI an unreachable server skips that dialect with a
 *    loud notice; with CI=true it fails the run, because CI must prove every dialect.
 * 2. compiles lib/ and test/workers/ to dist/, and bundles each worker script, for the specs
 *    that start real worker processes.
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
  await bundleWorkers(root);
};

/**
 * Each compiled worker script, with the library and the packages it loads (Nest, TypeORM, rxjs),
 * as one file in dist/test/worker-bundles/: the same code, but a process boots on ~0.5 CPU-s
 * instead of 0.9-1.2 (resolving and reading ~1,500 module files was most of it), and the suite
 * starts about 250 of them. The database drivers (native, or loaded by TypeORM by name) and the
 * optional peers stay outside, and so does whatever is not installed (TypeORM's other drivers,
 * Nest's optional packages): loaded, or not found, at run time as before.
 */
async function bundleWorkers(root) {
  const fs = require('node:fs');
  const esbuild = require('esbuild');
  const from = path.join(root, 'dist/test/workers');
  const entryPoints = fs.readdirSync(from).filter((f) => f.endsWith('.worker.js')).map((f) => path.join(from, f));
  const notInstalled = {
    name: 'not-installed-stays-outside',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, ({ path: name, resolveDir }) => {
        try {
          require.resolve(name, { paths: [resolveDir] });
          return undefined;
        } catch {
          return { path: name, external: true };
        }
      });
    },
  };
  await esbuild.build({
    entryPoints,
    outdir: path.join(root, 'dist/test/worker-bundles'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    // Classes keep their names (esbuild renames those that clash in the bundle): logs and Nest's
    // messages name them, and specs read those.
    keepNames: true,
    logLevel: 'error',
    external: ['better-sqlite3', 'pg', 'mysql2', '@opentelemetry/api', 'prom-client', '@nestjs/terminus', '@nestjs/event-emitter'],
    plugins: [notInstalled],
  });
}
