/**
 * jest.config.js for test/node-matrix.sh: the same specs, with better-sqlite3 taken from the copy
 * built for the running Node's ABI (NODE_MATRIX_SQLITE), in the specs and in the worker processes
 * they start (NODE_OPTIONS preloads node-matrix-redirect.cjs, which child processes inherit).
 */
const path = require('node:path');
const base = require('../../jest.config.js');

const sqlite = process.env.NODE_MATRIX_SQLITE;
if (!sqlite) throw new Error('NODE_MATRIX_SQLITE is not set; run test/node-matrix.sh');
process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --require ${path.join(__dirname, 'node-matrix-redirect.cjs')}`.trim();
process.env.JQ_DIALECTS = 'sqlite';

module.exports = {
  ...base,
  rootDir: path.resolve(__dirname, '../..'),
  moduleNameMapper: { ...base.moduleNameMapper, '^better-sqlite3$': sqlite },
};
