import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The package as an app installs it: `npm pack`ed from this repository (after the build steps
 * the suite does not run itself), unpacked into a temporary project whose other dependencies are
 * this repository's node_modules, linked entry by entry (no registry), and used from there:
 *
 * - the README's Jest example runs in Jest's ESM mode with the README's jest.config.js, on this
 *   Node (20 here). NestJS 12 ships ES modules only and Jest cannot require() them before Node
 *   24.9, so this works only if the package has an ES module build under the `import` condition;
 * - a CommonJS app require()s it (dist/lib), an ES module app imports it (dist/esm), without
 *   the optional peers installed (prom-client, OpenTelemetry, terminus, event-emitter);
 * - the dashboard, imported either way, serves the browser bundle shipped in the package;
 * - with the peers installed, every subpath loads in both formats.
 */
const root = process.cwd(); // jest runs from the repository root
const OPTIONAL_PEERS = ['prom-client', '@opentelemetry', '@nestjs/terminus', '@nestjs/event-emitter'];
const SUBPATHS = ['', '/dashboard', '/testing', '/tracing', '/metrics', '/health'];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], cwd: string, timeout = 180_000): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of ['NODE_PATH', 'NODE_OPTIONS', 'JEST_WORKER_ID']) delete env[key];
  return new Promise((resolve) => {
    execFile(file, args, { cwd, env, timeout, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

async function ok(file: string, args: string[], cwd: string, timeout?: number): Promise<string> {
  const result = await run(file, args, cwd, timeout);
  if (result.code !== 0) throw new Error(`${[file, ...args].join(' ')} exited ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** The last line of a child's stdout, as JSON (what the check scripts print), and its stderr. */
async function report(file: string, args: string[], cwd: string): Promise<any> {
  const result = await run(file, args, cwd);
  if (result.code !== 0) throw new Error(`${[file, ...args].join(' ')} exited ${result.code}\n${result.stdout}\n${result.stderr}`);
  const lines = result.stdout.trim().split('\n');
  return { ...JSON.parse(lines[lines.length - 1]), stderr: result.stderr };
}

/** node_modules of the consumer: the repository's entries as links, except `skip`. */
function linkDependencies(modules: string, skip: string[]): void {
  const source = join(root, 'node_modules');
  for (const name of readdirSync(source)) {
    if (name.startsWith('.') || name === 'nestjs-sql-job-queue' || skip.includes(name)) continue;
    if (!name.startsWith('@')) {
      if (!existsSync(join(modules, name))) symlinkSync(join(source, name), join(modules, name));
      continue;
    }
    mkdirSync(join(modules, name), { recursive: true });
    for (const sub of readdirSync(join(source, name))) {
      if (skip.includes(`${name}/${sub}`) || existsSync(join(modules, name, sub))) continue;
      symlinkSync(join(source, name, sub), join(modules, name, sub));
    }
  }
}

/** The README's jest.config.js for Node 20/22 (the ```js block that starts with `// jest.config.js`). */
function readmeJestConfig(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = /```js\n(\/\/ jest\.config\.js[\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('README.md has no ```js block starting with // jest.config.js');
  return block;
}

// A loaded module's entry file, as the consumer's own resolution found it, and what it exports.
const ESM_LOAD = `
const out = {};
for (const sub of JSON.parse(process.argv[2])) {
  const spec = 'nestjs-sql-job-queue' + sub;
  out[spec] = { file: import.meta.resolve(spec), exports: Object.keys(await import(spec)).length };
}
out.missingPeers = JSON.parse(process.argv[3]).filter((p) => { try { import.meta.resolve(p); return false; } catch { return true; } });
console.log(JSON.stringify(out));
`;
const CJS_LOAD = `
const out = {};
for (const sub of JSON.parse(process.argv[2])) {
  const spec = 'nestjs-sql-job-queue' + sub;
  out[spec] = { file: require.resolve(spec), exports: Object.keys(require(spec)).length };
}
out.missingPeers = JSON.parse(process.argv[3]).filter((p) => { try { require.resolve(p); return false; } catch { return true; } });
out.loadedPeers = Object.keys(require.cache).filter((f) => /[\\\\/]node_modules[\\\\/](prom-client|@opentelemetry|@nestjs[\\\\/](terminus|event-emitter))[\\\\/]/.test(f));
console.log(JSON.stringify(out));
`;

/** An app with the queue on SQLite and the dashboard; asks it for its page and a bundle file. */
function dashboardApp(format: 'esm' | 'cjs'): string {
  const imports =
    format === 'esm'
      ? `import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { JobQueueModule } from 'nestjs-sql-job-queue';
import { JobQueueDashboardModule } from 'nestjs-sql-job-queue/dashboard';
const served = import.meta.resolve('nestjs-sql-job-queue/dashboard');`
      : `require('reflect-metadata');
const { readFileSync } = require('node:fs');
const { Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { JobQueueModule } = require('nestjs-sql-job-queue');
const { JobQueueDashboardModule } = require('nestjs-sql-job-queue/dashboard');
const served = require.resolve('nestjs-sql-job-queue/dashboard');`;
  return `${imports}
async function main() {
  const [database, shipped] = process.argv.slice(2);
  class AppModule {}
  Module({ imports: [JobQueueModule.forRoot({ dialect: 'sqlite', database }), JobQueueDashboardModule.forRoot({ auth: 'public' })] })(AppModule);
  const app = await NestFactory.create(AppModule, { logger: ['error'] });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address();
  const page = await fetch('http://127.0.0.1:' + port + '/queue');
  const asset = await fetch('http://127.0.0.1:' + port + '/queue/assets/app.js');
  const body = await asset.text();
  await app.close();
  console.log(JSON.stringify({ served, page: page.status, asset: asset.status, shipped: body === readFileSync(shipped, 'utf8') && body.length > 1000 }));
}
main().catch((err) => { console.error(err); process.exit(1); });
`;
}

/** tsconfig.json as \`nest new\` writes it for a NestJS 12 app (strict on). */
const NEST_TSCONFIG = {
  compilerOptions: {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    resolvePackageJsonExports: true,
    esModuleInterop: true,
    isolatedModules: true,
    declaration: true,
    removeComments: true,
    emitDecoratorMetadata: true,
    experimentalDecorators: true,
    allowSyntheticDefaultImports: true,
    target: 'ES2023',
    types: ['node', 'jest'],
    sourceMap: true,
    outDir: './dist',
    rootDir: '.',
    incremental: true,
    skipLibCheck: true,
    strict: true,
    strictPropertyInitialization: false,
  },
};

describe('the packed package, installed in an app', () => {
  let tmp: string;
  let app: string;
  let installed: string;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'jq-esm-package-'));
    // dist/lib is built by the suite's global setup (tsc -p tsconfig.build.json); the rest of
    // `npm run build` here. build:esm is the ES module build (absent before it existed).
    await ok('npm', ['run', '--silent', '--if-present', 'build:esm'], root, 300_000);
    await ok(process.execPath, [join(root, 'scripts', 'build-dashboard-ui.cjs')], root);
    const packed = JSON.parse(await ok('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], root));
    const tarball = join(tmp, packed[0].filename);

    app = join(tmp, 'app');
    installed = join(app, 'node_modules', 'nestjs-sql-job-queue');
    mkdirSync(installed, { recursive: true });
    mkdirSync(join(app, 'test'));
    mkdirSync(join(tmp, 'elsewhere')); // a cwd with no dist/dashboard-ui to fall back on
    await ok('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'], tmp);
    linkDependencies(join(app, 'node_modules'), OPTIONAL_PEERS);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }, null, 2));
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(NEST_TSCONFIG, null, 2));
    writeFileSync(join(app, 'jest.config.js'), readmeJestConfig());
    const example = readFileSync(join(root, 'test/examples/testing-your-handlers.spec.ts'), 'utf8');
    writeFileSync(join(app, 'test', 'report-jobs.spec.ts'), example);
    writeFileSync(join(app, 'esm-load.mjs'), ESM_LOAD);
    writeFileSync(join(app, 'cjs-load.cjs'), CJS_LOAD);
    writeFileSync(join(app, 'dashboard.mjs'), dashboardApp('esm'));
    writeFileSync(join(app, 'dashboard.cjs'), dashboardApp('cjs'));
  }, 600_000);

  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("runs the README's Jest example in Jest's ESM mode, with the README's jest.config.js", async () => {
    const jest = join(app, 'node_modules', 'jest', 'bin', 'jest.js');
    const args = ['--experimental-vm-modules', '--disable-warning=ExperimentalWarning', jest, '--cacheDirectory', join(tmp, 'jest-cache')];
    const result = await run(process.execPath, args, app);
    const output = `${result.stdout}\n${result.stderr}`;
    expect({ code: result.code, output }).toEqual({ code: 0, output: expect.stringMatching(/Tests:\s+2 passed, 2 total/) });
    expect(output).toContain('PASS test/report-jobs.spec.ts');
  }, 300_000);

  it('type-checks the example against the ES module types (as ts-jest compiles it) and the CommonJS ones (nest build)', async () => {
    const tsc = join(app, 'node_modules', 'typescript', 'bin', 'tsc');
    const [esm, cjs] = await Promise.all([
      run(process.execPath, [tsc, '--noEmit', '--incremental', 'false', '-p', 'tsconfig.json', '--module', 'es2022', '--moduleResolution', 'bundler', '--traceResolution'], app),
      run(process.execPath, [tsc, '--noEmit', '--incremental', 'false', '-p', 'tsconfig.json', '--traceResolution'], app),
    ]);
    const resolved = (r: Run) => /Module name 'nestjs-sql-job-queue' was successfully resolved to '([^']+)'/.exec(r.stdout)?.[1];
    const errors = (r: Run) => r.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
    expect({ code: esm.code, errors: errors(esm), types: resolved(esm) }).toEqual({ code: 0, errors: [], types: join(installed, 'dist/esm/index.d.ts') });
    expect({ code: cjs.code, errors: errors(cjs), types: resolved(cjs) }).toEqual({ code: 0, errors: [], types: join(installed, 'dist/lib/index.d.ts') });
  }, 300_000);

  it('loads as ES modules from import and as CommonJS from require, without the optional peers installed', async () => {
    const core = JSON.stringify(['', '/testing', '/dashboard']);
    const peers = JSON.stringify(OPTIONAL_PEERS.map((p) => (p === '@opentelemetry' ? '@opentelemetry/api' : p)));
    const [esm, cjs] = await Promise.all([
      report(process.execPath, [join(app, 'esm-load.mjs'), core, peers], app),
      report(process.execPath, [join(app, 'cjs-load.cjs'), core, peers], app),
    ]);
    const url = (file: string) => `file://${join(installed, file)}`;
    expect(esm).toEqual({
      'nestjs-sql-job-queue': { file: url('dist/esm/index.js'), exports: expect.any(Number) },
      'nestjs-sql-job-queue/testing': { file: url('dist/esm/testing/index.js'), exports: expect.any(Number) },
      'nestjs-sql-job-queue/dashboard': { file: url('dist/esm/dashboard/index.js'), exports: expect.any(Number) },
      missingPeers: JSON.parse(peers), // really not installed: importing them would have failed
      stderr: '', // no MODULE_TYPELESS_PACKAGE_JSON: dist/esm/package.json says "type": "module"
    });
    expect(cjs).toEqual({
      'nestjs-sql-job-queue': { file: join(installed, 'dist/lib/index.js'), exports: esm['nestjs-sql-job-queue'].exports },
      'nestjs-sql-job-queue/testing': { file: join(installed, 'dist/lib/testing/index.js'), exports: esm['nestjs-sql-job-queue/testing'].exports },
      'nestjs-sql-job-queue/dashboard': { file: join(installed, 'dist/lib/dashboard/index.js'), exports: esm['nestjs-sql-job-queue/dashboard'].exports },
      missingPeers: JSON.parse(peers),
      loadedPeers: [],
      stderr: expect.any(String), // Node 20 warns that require() loads the ES modules of NestJS
    });
    expect(esm['nestjs-sql-job-queue'].exports).toBeGreaterThan(50);
  }, 120_000);

  it('serves the dashboard with the browser bundle shipped in the package, imported as ESM and as CommonJS', async () => {
    const shipped = join(installed, 'dist/dashboard-ui/app.js');
    const elsewhere = join(tmp, 'elsewhere');
    const [esm, cjs] = await Promise.all([
      report(process.execPath, [join(app, 'dashboard.mjs'), join(tmp, 'esm.sqlite'), shipped], elsewhere),
      report(process.execPath, [join(app, 'dashboard.cjs'), join(tmp, 'cjs.sqlite'), shipped], elsewhere),
    ]);
    expect(esm).toMatchObject({ served: `file://${join(installed, 'dist/esm/dashboard/index.js')}`, page: 200, asset: 200, shipped: true });
    expect(cjs).toMatchObject({ served: join(installed, 'dist/lib/dashboard/index.js'), page: 200, asset: 200, shipped: true });
  }, 120_000);

  it('loads every subpath in both formats once the optional peers are installed', async () => {
    linkDependencies(join(app, 'node_modules'), []);
    const all = JSON.stringify(SUBPATHS);
    const [esm, cjs] = await Promise.all([
      report(process.execPath, [join(app, 'esm-load.mjs'), all, '[]'], app),
      report(process.execPath, [join(app, 'cjs-load.cjs'), all, '[]'], app),
    ]);
    for (const sub of SUBPATHS) {
      const spec = `nestjs-sql-job-queue${sub}`;
      expect({ spec, esm: esm[spec], cjs: cjs[spec] }).toEqual({
        spec,
        esm: { file: `file://${join(installed, 'dist/esm', sub, 'index.js')}`, exports: expect.any(Number) },
        cjs: { file: join(installed, 'dist/lib', sub, 'index.js'), exports: esm[spec].exports },
      });
    }
  }, 120_000);
});
