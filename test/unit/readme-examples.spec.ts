import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

/**
 * Every ```ts block of README.md must compile against the library's real types: a newcomer
 * copies them, and an example that no longer compiles (a renamed option, a missing import) is
 * the first thing they hit. Each block is its own module. It may lean on the context a snippet
 * continues from, and on nothing else:
 * - @nestjs/common's decorators, `JobQueueModule`, and an injected `queue: JobQueueService`;
 * - the placeholder values in CONTEXT (a URL, ids, your own entity), declared only when the
 *   block uses them without declaring them (found from the compiler's "cannot find name");
 * - a block that starts with a decorated method is a class member, checked inside a class
 *   whose other members (`this.storage`, …) are the reader's own; a member cannot carry
 *   imports, so it gets `JobHandler` and `JobContext`.
 * Every other library name must be imported by the block itself. Blocks that augment
 * `JobTypes` are checked alone (an augmentation is global).
 */
const root = process.cwd(); // jest runs from the repository root
const dir = join(root, 'test/.readme-examples'); // virtual: these files exist only in memory

/** Placeholders a snippet may use without declaring: name → declaration. */
const CONTEXT: Record<string, string> = {
  queue: "declare const queue: import('nestjs-sql-job-queue').JobQueueService;",
  url: 'declare const url: string;',
  ids: 'declare const ids: Record<string, number>;',
  renderId: 'declare const renderId: number;',
  syncId: 'declare const syncId: number;',
  tenant: 'declare const tenant: string;',
  user: 'declare const user: string;',
  doc: 'declare const doc: string;',
  args: 'declare const args: { [key: string]: string };',
  dataSource: "declare const dataSource: import('typeorm').DataSource;",
  appMigrations: 'declare const appMigrations: Function[];',
  Order: 'declare class Order { id: number; total: number; }',
  toCsv: 'declare function toCsv(rows: unknown[]): string;',
};
const NEST_BASICS = ['Injectable', 'Module', 'Controller', 'Get', 'Inject'];
/** Packages the examples name that this repository does not install: typed just as far as the examples use them. */
const STUBS = `
declare module '@nestjs/config' { export class ConfigService { get<T = string>(key: string): T | undefined; } }
declare module '@opentelemetry/sdk-node' { export class NodeSDK { constructor(options: { traceExporter?: unknown }); start(): void; } }
declare module '@opentelemetry/exporter-trace-otlp-http' { export class OTLPTraceExporter { constructor(options?: object); } }
`;

interface Block {
  line: number;
  code: string;
}

function readmeBlocks(): Block[] {
  const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```ts') continue;
    const end = lines.findIndex((l, j) => j > i && l.trim() === '```');
    blocks.push({ line: i + 2, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** The block as a module, with the context it may lean on. */
function moduleText(block: Block, declare: string[]): string {
  const imported = (name: string) => new RegExp(`import[^;]*\\b${name}\\b[^;]*from`).test(block.code);
  const nest = NEST_BASICS.filter((n) => !imported(n));
  const member = isMember(block);
  const library = [...(imported('JobQueueModule') ? [] : ['JobQueueModule']), ...(member ? ['JobHandler', 'JobContext'] : [])];
  const head = [
    `import { ${nest.join(', ')} } from '@nestjs/common';`,
    library.length ? `import { ${library.join(', ')} } from 'nestjs-sql-job-queue';` : '',
    ...declare.map((n) => CONTEXT[n]),
  ].join(' '); // one line, so that line numbers past it are the README's
  const body = member ? `@Injectable() class ReadmeMember { [yours: string]: any;\n${block.code}\n}` : block.code;
  return `${head}\n${body}\nexport {};\n`;
}

const parsed = new Map<string, ts.SourceFile | undefined>();

function compile(files: Map<string, string>, old?: ts.Program): { program: ts.Program; diagnostics: readonly ts.Diagnostic[] } {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
  const tsconfig = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  // ES modules (top-level await in snippets), resolved as the specs resolve the package.
  const options: ts.CompilerOptions = {
    ...tsconfig.options,
    module: ts.ModuleKind.ES2022,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    noEmit: true,
    incremental: false,
    noUnusedLocals: false,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, onError) => {
    const text = files.get(resolve(name));
    if (text !== undefined) return ts.createSourceFile(name, text, lang);
    // The library's and node_modules' files are parsed once for every program of the spec.
    const key = `${name}\0${JSON.stringify(lang)}`;
    if (!parsed.has(key)) parsed.set(key, getSourceFile(name, lang, onError));
    return parsed.get(key);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => files.has(resolve(name)) || fileExists(name);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => files.get(resolve(name)) ?? readFile(name);
  const program = ts.createProgram([...files.keys()], options, host, old);
  // The examples' own diagnostics and the program's global ones: the library's bodies are
  // checked by the build (checking them here too was most of the spec's time).
  const diagnostics = [...files.keys()].flatMap((name) => ts.getPreEmitDiagnostics(program, program.getSourceFile(name)));
  return { program, diagnostics: [...new Set(diagnostics)].filter((d) => !d.file || files.has(resolve(d.file.fileName))) };
}

function isMember(block: Block): boolean {
  return /^@\w+\(/.test(block.code.trimStart());
}

function fileOf(block: Block): string {
  return join(dir, `readme-line-${block.line}.ts`);
}

/** Compiles the blocks once bare, then again with the CONTEXT names they were missing. */
function check(blocks: Block[]): string[] {
  const stubs = join(dir, 'stubs.d.ts');
  const bare = new Map(blocks.map((b) => [fileOf(b), moduleText(b, [])]));
  const missing = new Map<string, Set<string>>();
  const first = compile(new Map([...bare, [stubs, STUBS]]));
  for (const d of first.diagnostics) {
    const name = /^Cannot find name '(\w+)'|^No value exists in scope for the shorthand property '(\w+)'/.exec(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    const n = name?.[1] ?? name?.[2];
    if (d.file && n && CONTEXT[n]) {
      const set = missing.get(resolve(d.file.fileName)) ?? new Set();
      missing.set(resolve(d.file.fileName), set.add(n));
    }
  }
  const files = new Map(blocks.map((b) => [fileOf(b), moduleText(b, [...(missing.get(fileOf(b)) ?? [])])]));
  return compile(new Map([...files, [stubs, STUBS]]), first.program).diagnostics.map((d) => {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : 0;
    const block = blocks.find((b) => fileOf(b) === resolve(d.file?.fileName ?? ''));
    const member = block && isMember(block) ? 1 : 0;
    return `README.md:${block ? block.line + line - 1 - member : '?'} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

describe('README examples', () => {
  const blocks = readmeBlocks();
  const augments = (b: Block) => b.code.includes("declare module 'nestjs-sql-job-queue'");

  it('finds the examples (the extraction itself works)', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(20);
    expect(blocks.filter(augments).length).toBeGreaterThanOrEqual(1);
  });

  it('every subpath the README imports is exported by package.json, to the built files of its lib/ folder', () => {
    // The spec resolves the package to lib/ through tsconfig paths; an app resolves it through
    // package.json: `exports` (moduleResolution node16/nodenext/bundler; `import` gets the ES
    // module build, `require` the CommonJS one) or `typesVersions` (node10, CommonJS).
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const subpaths = [...new Set([...readme.matchAll(/from 'nestjs-sql-job-queue\/(\w+)'/g)].map((m) => m[1]))].sort();
    expect(subpaths).toEqual(expect.arrayContaining(['dashboard', 'health', 'metrics', 'testing', 'tracing']));
    const dual = (dir: string) => ({
      import: { types: `./dist/esm/${dir}index.d.ts`, default: `./dist/esm/${dir}index.js` },
      require: { types: `./dist/lib/${dir}index.d.ts`, default: `./dist/lib/${dir}index.js` },
    });
    for (const sub of subpaths) {
      expect({ sub, exports: pkg.exports[`./${sub}`] }).toEqual({ sub, exports: dual(`${sub}/`) });
      expect({ sub, typesVersions: pkg.typesVersions['*'][sub] }).toEqual({ sub, typesVersions: [`dist/lib/${sub}/index.d.ts`] });
      expect(ts.sys.fileExists(join(root, `lib/${sub}/index.ts`))).toBe(true);
    }
    expect(pkg.exports['.']).toEqual(dual(''));
    expect({ main: pkg.main, types: pkg.types }).toEqual({ main: 'dist/lib/index.js', types: 'dist/lib/index.d.ts' });
    expect(pkg.files).toEqual(expect.arrayContaining(['dist/lib', 'dist/esm', 'dist/dashboard-ui']));
  });

  it('every ts block compiles against the real types', () => {
    const errors = [...check(blocks.filter((b) => !augments(b))), ...blocks.filter(augments).flatMap((b) => check([b]))];
    expect(errors).toEqual([]);
  }, 180_000);
});
