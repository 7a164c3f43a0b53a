// snarkjs.groth16.prove in one warm Node process, driven by bench/snarkjs.py so that its
// proofs alternate with numba-cuzk's under the same machine load: a warm-up proof (builds
// the curve and its worker threads), then "ready"; each line read on stdin proves once
// (reading the zkey and witness files) and prints its milliseconds.
// usage: node bench/snarkjs_prove.cjs NODE_MODULES ZKEY WTNS
const path = require("path");
const readline = require("readline");

const [nodeModules, zkey, wtns] = process.argv.slice(2);
const snarkjs = require(path.join(nodeModules, "snarkjs"));

async function main() {
    await snarkjs.groth16.prove(zkey, wtns);
    console.log("ready");
    for await (const _ of readline.createInterface({ input: process.stdin })) {
        const start = performance.now();
        await snarkjs.groth16.prove(zkey, wtns);
        console.log(String(performance.now() - start));
    }
    process.exit(0); // the curve's worker threads would keep Node running
}

main().catch((err) => {
    console.error(err);
    process.exit(1);
});
