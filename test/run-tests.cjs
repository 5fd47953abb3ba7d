#!/usr/bin/env node
/**
 * `npm test`: phase 1 runs every spec in parallel, except those in test/restart/, which
 * restart the shared PostgreSQL and MariaDB servers, and those in test/alone/, whose assertions
 * are about time across worker processes (rate limits: a handler start more than 60 ms late is
 * handed back, which costs rate when the OS leaves a worker unscheduled for that long, as six
 * parallel spec files on two cores did) or on the database server's global counters (another
 * spec's statements would count too); phase 2 runs those alone, one at a time.
 * Arguments go to both phases (`npm test -- test/integration/engine` runs phase 1 only,
 * `npm test -- test/restart test/alone` phase 2 only).
 */
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const jest = [
  '--experimental-vm-modules',
  '--disable-warning=ExperimentalWarning',
  path.join(root, 'node_modules/jest/bin/jest.js'),
];
// Split path patterns from flags; these flags take the next argument as their value.
const VALUE_FLAGS = new Set(['-t', '--testNamePattern', '-w', '--maxWorkers', '-c', '--config', '--testTimeout', '--seed', '--shard', '--outputFile', '--reporters']);
const args = process.argv.slice(2);
const patterns = [];
const flags = [];
for (let i = 0; i < args.length; i++) {
  if (!args[i].startsWith('-')) patterns.push(args[i]);
  else if (VALUE_FLAGS.has(args[i]) && i + 1 < args.length) flags.push(args[i], args[++i]);
  else flags.push(args[i]);
}
const ALONE = ['test/restart/', 'test/alone/'];
const isAlone = (p) => p.includes('restart') || p.includes('alone');
const restartPatterns = patterns.filter(isAlone);
const otherPatterns = patterns.filter((p) => !isAlone(p));

function run(label, extra) {
  process.stdout.write(`\n=== ${label} ===\n`);
  const result = spawnSync(process.execPath, [...jest, ...extra], { cwd: root, stdio: 'inherit', env: process.env });
  return result.status ?? 1;
}

let status = 0;
if (!patterns.length || otherPatterns.length) {
  status = run('phase 1: unit, integration and e2e specs, in parallel', [...otherPatterns, ...flags]);
}
if (!patterns.length || restartPatterns.length) {
  // Patterns first: --testPathIgnorePatterns takes a list and would swallow what follows it.
  const phase2 = run('phase 2: database restart and timing specs, alone', [
    ...(restartPatterns.length ? restartPatterns : ALONE),
    ...flags,
    '--runInBand',
    '--testPathIgnorePatterns=/node_modules/',
  ]);
  status = status || phase2;
}
process.exit(status);
