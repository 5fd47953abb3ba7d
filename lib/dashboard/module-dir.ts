/**
 * The folder of this compiled module, to find the browser bundle shipped next to it. The
 * CommonJS build has `__dirname`; the ES module build compiles module-dir.esm.ts in its place
 * (tsconfig.esm.json `moduleSuffixes`). Undefined when the sources run as ES modules (Jest).
 */
export const moduleDir: string | undefined = typeof __dirname === 'string' ? __dirname : undefined;
