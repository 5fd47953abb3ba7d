// Preloaded by test/node-matrix.sh's runs: `require('better-sqlite3')` loads the copy built for this Node.
const Module = require('node:module');
const target = process.env.NODE_MATRIX_SQLITE;
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return resolve.call(this, request === 'better-sqlite3' && target ? target : request, ...rest);
};
