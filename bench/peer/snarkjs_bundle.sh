#!/usr/bin/env bash
# snarkjs for a host without Node (the H200 image has none), for gpu_check.sh's oneshot section:
#   bench/peer/snarkjs_bundle.sh [SIZES]      (from the project root, after `npm ci --prefix .ci/node`)
# writes, into .peer/ (ignored; carry it):
#   node-snarkjs.tar.xz   bin/node (this machine's: it needs glibc >= 2.28 and libstdc++) and
#                         node_modules/: snarkjs and its runtime dependencies from .ci/node, their
#                         test folders left out (~26 MB: node 24, the modules 2)
#   chain-circuits.tar.xz bench/snarkjs.py's chain circuits at SIZES (default 14,16: logK/ with the
#                         r1cs, the witness, the wasm and input.json), made here where missing, without
#                         their keys: bench.startup sets those up on the device (a 2^16 zkey is ~44 MB)
set -euo pipefail
sizes=${1:-14,16}
modules=.ci/node/node_modules
[ -f "$modules/snarkjs/package.json" ] || { echo "no $modules/snarkjs: npm ci --prefix .ci/node" >&2; exit 1; }
node=$(command -v node) || { echo "no node on PATH" >&2; exit 1; }
mkdir -p .peer
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# snarkjs's runtime dependencies, resolved as Node resolves them (nearest node_modules upward)
deps=$(cd .ci/node && node -e '
const fs = require("fs"), path = require("path");
const seen = new Set();
function find(name, from) {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name);
    if (fs.existsSync(path.join(candidate, "package.json"))) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`${name} (needed by ${from}) is not installed`);
  }
}
function walk(dir) {
  if (seen.has(dir)) return;
  seen.add(dir);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json")));
  for (const name of Object.keys(manifest.dependencies || {})) walk(find(name, dir));
}
walk(path.resolve("node_modules/snarkjs"));
console.log([...seen].map((dir) => path.relative(process.cwd(), dir)).join("\n"));')
mkdir -p "$work/node/bin"
cp "$node" "$work/node/bin/node"
# shellcheck disable=SC2086
tar -C .ci/node -cf - --exclude='*/test' --exclude='*/tests' --exclude='*.map' $deps node_modules/.bin/snarkjs \
    | tar -C "$work/node" -xf -
tar -C "$work/node" -cJf .peer/node-snarkjs.tar.xz .

# the circuits: made by bench/snarkjs.py's prepare where missing (circom2, snarkjs wtns calculate and
# a key set up on the CPU, ~2 min at 2^16) with $PYTHON (default .venv/bin/python), copied without keys
export NUMBA_CUZK_NODE_MODULES=$PWD/$modules
for k in ${sizes//,/ }; do
    folder=build/bench-snarkjs/log$k
    [ -f "$folder/chain_log$k.wtns" ] || "${PYTHON:-.venv/bin/python}" -c "from pathlib import Path
from bench.snarkjs import prepare
from tests.interop.node import NodeTools
prepare($k, Path('$folder').resolve(), NodeTools.find(), gpu=False)"
    mkdir -p "$work/circuits/log$k"
    cp -r "$folder/chain_log$k.r1cs" "$folder/chain_log$k.wtns" "$folder/chain_log$k.circom" \
        "$folder/input.json" "$folder/chain_log${k}_js" "$work/circuits/log$k/"
done
tar -C "$work/circuits" -cJf .peer/chain-circuits.tar.xz .
ls -la .peer
