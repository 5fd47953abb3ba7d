import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

/**
 * Compile-time tests of typed payloads: each folder of test/types is type-checked as its own
 * program (an augmentation of JobTypes is global, so augmented and loose fixtures cannot share
 * one). A `// @ts-expect-error` that is not an error is itself an error (TS2578), so every
 * expected failure is proven, and every line without the directive must compile.
 */
const root = resolve(process.cwd(), 'test/types'); // jest runs from the repository root

function typeCheck(folder: string): string[] {
  const configPath = join(root, folder, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, join(root, folder));
  expect(parsed.errors.map((e) => ts.flattenDiagnosticMessageText(e.messageText, '\n'))).toEqual([]);
  expect(parsed.fileNames.length).toBeGreaterThan(0);
  const program = ts.createProgram(parsed.fileNames, parsed.options);
  // The fixtures' own diagnostics (and the program's global ones): the library's bodies are
  // checked by the build, and checking them again here took two thirds of the spec's time.
  const diagnostics = parsed.fileNames.flatMap((name) => ts.getPreEmitDiagnostics(program, program.getSourceFile(name)));
  return [...new Set(diagnostics)].map((d) => {
    const where = d.file && d.start !== undefined ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : '';
    return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

function expectedErrors(folder: string): number {
  return readdirSync(join(root, folder))
    .filter((f) => f.endsWith('.ts'))
    .reduce((n, f) => n + (readFileSync(join(root, folder, f), 'utf8').match(/@ts-expect-error/g) ?? []).length, 0);
}

describe('typed payloads (compile-time fixtures)', () => {
  it.each([
    ['augmented', 'JobTypes declared: enqueue, enqueueGraph, handlers, get, waitFor, ctx.upstream are checked', 15],
    ['loose', 'JobTypes not declared: everything stays as loose as before', 3],
  ])('%s: %s', (folder, _what, minExpected) => {
    // The fixtures must really exercise failures, not pass because they are empty.
    expect(expectedErrors(folder)).toBeGreaterThanOrEqual(minExpected);
    expect(typeCheck(folder)).toEqual([]);
  }, 120_000);
});
