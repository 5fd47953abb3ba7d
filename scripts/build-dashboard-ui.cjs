#!/usr/bin/env node
/**
 * Bundles the dashboard's browser code (dashboard-ui/, plain TypeScript + elkjs's API) into
 * dist/dashboard-ui/app.js and app.css, beside elkjs's layout worker (elk-worker.js), shipped in
 * the package: no CDN, works offline.
 * Part of `npm run build`; the dashboard specs run it too, so files are replaced atomically
 * (written aside, then renamed) for specs building at the same time.
 */
const fs = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');

const root = path.resolve(__dirname, '..');
const ui = path.join(root, 'dashboard-ui');
const out = path.join(root, 'dist', 'dashboard-ui');
const common = { bundle: true, minify: true, legalComments: 'none', logLevel: 'warning', write: false };

function put(file, contents) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, contents);
  fs.renameSync(tmp, file);
}

async function main() {
  const [js, css] = await Promise.all([
    esbuild.build({ ...common, entryPoints: [path.join(ui, 'main.ts')], outfile: path.join(out, 'app.js'), format: 'iife', target: ['es2020'], platform: 'browser' }),
    esbuild.build({ ...common, entryPoints: [path.join(ui, 'styles.css')], outfile: path.join(out, 'app.css') }),
  ]);
  fs.mkdirSync(out, { recursive: true });
  for (const f of [...js.outputFiles, ...css.outputFiles]) put(f.path, f.contents);
  put(path.join(out, 'favicon.svg'), fs.readFileSync(path.join(ui, 'favicon.svg')));
  // The graph page's layout worker: elkjs's own minified build, served beside app.js.
  put(path.join(out, 'elk-worker.js'), fs.readFileSync(require.resolve('elkjs/lib/elk-worker.min.js')));
}

main().catch((err) => {
  process.stderr.write(`dashboard UI build failed: ${err.message}\n`);
  process.exit(1);
});
