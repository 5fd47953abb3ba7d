#!/usr/bin/env node
/**
 * The ES module build of lib/ (dist/esm), next to the CommonJS one (dist/lib): NestJS 12 ships
 * ES modules only, and a loader that cannot require() them (Jest before Node 24.9) needs this
 * package as ES modules too. Part of `npm run build`.
 *
 * tsc with tsconfig.esm.json, through the compiler API for one thing tsc cannot do: the sources
 * import `../database/sql`, which Node's ESM resolver rejects (no extension search, no
 * index.js). A transformer on the emitted JavaScript and declarations rewrites every relative
 * specifier to the file TypeScript resolved it to (`../database/sql.js`, `./errors/index.js`,
 * `./module-dir.esm.js`), so the output is what the type checker saw, and a specifier that does
 * not resolve fails the build. dist/esm/package.json says `"type": "module"`.
 *
 *   node scripts/build-esm.cjs [--outDir dir]
 */
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const root = path.resolve(__dirname, '..');
const outArg = process.argv.indexOf('--outDir');

function fail(message) {
  process.stderr.write(`build-esm: ${message}\n`);
  process.exit(1);
}

function readConfig() {
  const file = path.join(root, 'tsconfig.esm.json');
  const { config, error } = ts.readConfigFile(file, ts.sys.readFile);
  if (error) fail(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, root, undefined, file);
  if (outArg > 0) parsed.options.outDir = path.resolve(process.argv[outArg + 1]);
  return parsed;
}

const isRelative = (spec) => spec === '.' || spec === '..' || spec.startsWith('./') || spec.startsWith('../');

/** Rewrites `./x` to the emitted file TypeScript resolved it to, relative to `from`. */
function specifierRewriter(options, host) {
  const cache = ts.createModuleResolutionCache(root, (f) => f, options);
  const libDir = path.resolve(options.rootDir);
  return (spec, from) => {
    const { resolvedModule } = ts.resolveModuleName(spec, from, options, host, cache);
    const target = resolvedModule?.resolvedFileName;
    if (!target || !target.startsWith(libDir + path.sep) || !/\.(d\.)?ts$/.test(target)) {
      throw new Error(`${path.relative(root, from)}: cannot rewrite '${spec}' (resolved to ${target ?? 'nothing'})`);
    }
    let out = path.relative(path.dirname(from), target.replace(/\.d\.ts$|\.ts$/, '.js')).split(path.sep).join('/');
    if (!out.startsWith('.')) out = `./${out}`;
    return out;
  };
}

/** Transformer factory: every relative module specifier of a file, in JS and in declarations. */
function rewriteSpecifiers(rewrite) {
  return (context) => {
    const { factory } = context;
    return (file) => {
      // Declarations come as a SourceFile whose name is the .ts it was made from.
      const from = (ts.getOriginalNode(file) ?? file).fileName;
      const literal = (node) =>
        node && ts.isStringLiteral(node) && isRelative(node.text) ? factory.createStringLiteral(rewrite(node.text, from), true) : undefined;
      const visit = (node) => {
        if (ts.isImportDeclaration(node)) {
          const spec = literal(node.moduleSpecifier);
          if (spec) return factory.updateImportDeclaration(node, node.modifiers, node.importClause, spec, node.attributes);
        } else if (ts.isExportDeclaration(node)) {
          const spec = literal(node.moduleSpecifier);
          if (spec) {
            return factory.updateExportDeclaration(node, node.modifiers, node.isTypeOnly, node.exportClause, spec, node.attributes);
          }
        } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
          const spec = literal(node.arguments[0]);
          if (spec) return factory.updateCallExpression(node, node.expression, node.typeArguments, [spec, ...node.arguments.slice(1)]);
        } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
          const spec = literal(node.argument.literal);
          if (spec) {
            const argument = factory.updateLiteralTypeNode(node.argument, spec);
            return factory.updateImportTypeNode(node, argument, node.attributes, node.qualifier, node.typeArguments, node.isTypeOf);
          }
        } else if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name) && isRelative(node.name.text)) {
          throw new Error(`${path.relative(root, from)}: a relative module augmentation ('${node.name.text}') is not rewritten`);
        }
        return ts.visitEachChild(node, visit, context);
      };
      return ts.visitNode(file, visit);
    };
  };
}

function main() {
  const started = Date.now();
  const config = readConfig();
  if (config.errors.length) fail(ts.formatDiagnostics(config.errors, formatHost));
  const options = config.options;
  const host = ts.createCompilerHost(options);
  // x.ts with an x.esm.ts next to it is the CommonJS build's: nothing here imports it.
  const libDir = path.resolve(options.rootDir) + path.sep;
  const shadowed = (f) => path.resolve(f).startsWith(libDir) && /(?<!\.d|\.esm)\.ts$/.test(f) && fs.existsSync(f.replace(/\.ts$/, '.esm.ts'));
  const rootNames = config.fileNames.filter((f) => !shadowed(f));
  const program = ts.createProgram({ rootNames, options, host, projectReferences: config.projectReferences });
  const diagnostics = ts.getPreEmitDiagnostics(program);
  if (diagnostics.length) fail(`\n${ts.formatDiagnosticsWithColorAndContext(diagnostics, formatHost)}`);
  const imported = program.getSourceFiles().find((f) => shadowed(f.fileName));
  if (imported) fail(`${imported.fileName} is imported, though its .esm.ts replaces it`);
  // From scratch: a module deleted from lib/ must not live on in the package.
  fs.rmSync(options.outDir, { recursive: true, force: true });
  const transform = rewriteSpecifiers(specifierRewriter(options, host));
  // `after`: the TypeScript transform has already elided type-only imports and emitted the
  // decorator metadata; what is left to touch is the specifiers of what stays.
  const emitted = program.emit(undefined, undefined, undefined, false, { after: [transform], afterDeclarations: [transform] });
  if (emitted.diagnostics.length) fail(`\n${ts.formatDiagnosticsWithColorAndContext(emitted.diagnostics, formatHost)}`);
  if (emitted.emitSkipped) fail('emit skipped');
  fs.writeFileSync(path.join(options.outDir, 'package.json'), `${JSON.stringify({ type: 'module' }, null, 2)}\n`);
  process.stdout.write(`build-esm: ${path.relative(root, options.outDir) || '.'} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

const formatHost = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => root,
  getNewLine: () => '\n',
};

try {
  main();
} catch (err) {
  fail(err.message);
}
