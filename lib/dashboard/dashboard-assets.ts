import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { moduleDir } from './module-dir';

/** The browser bundle, built by scripts/build-dashboard-ui.cjs into dist/dashboard-ui/. */
export const ASSET_FILES: Readonly<Record<string, string>> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  // elkjs's layout engine, run by the graph page in a Web Worker.
  'elk-worker.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};

/**
 * Where the bundle is: next to the compiled module in the package (dist/lib/dashboard or
 * dist/esm/dashboard → dist/dashboard-ui), or, when the TypeScript sources run directly
 * (tests), dist/ of the cwd.
 */
export function dashboardAssetsDir(): string {
  const here = moduleDir;
  const candidates = [
    ...(here ? [resolve(here, '..', '..', 'dashboard-ui'), resolve(here, '..', '..', 'dist', 'dashboard-ui')] : []),
    resolve(process.cwd(), 'dist', 'dashboard-ui'),
  ];
  const found = candidates.find((dir) => existsSync(join(dir, 'app.js')));
  if (!found) {
    throw new Error(`JobQueueDashboardModule: the browser bundle is missing (looked in ${candidates.join(', ')}); run npm run build.`);
  }
  return found;
}

/** Reads every asset once at start-up: a request never touches the file system. */
export function loadAssets(dir = dashboardAssetsDir()): Map<string, { type: string; body: string }> {
  const out = new Map<string, { type: string; body: string }>();
  for (const [file, type] of Object.entries(ASSET_FILES)) out.set(file, { type, body: readFileSync(join(dir, file), 'utf8') });
  return out;
}
