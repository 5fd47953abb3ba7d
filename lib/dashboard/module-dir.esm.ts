import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The ES module build's module-dir.ts (tsconfig.esm.json `moduleSuffixes`): `import.meta` is a
 * syntax error in CommonJS, so it lives in a file only the ES module build compiles.
 */
export const moduleDir: string | undefined = dirname(fileURLToPath(import.meta.url));
