"""snarkjs groth16 prove against numba-cuzk on the same zkey and witness (issue 9).

For each size 2^K: a circom circuit of 2^K - 3 multiplications (x_i = x_(i-1) * a or b,
public a and c: 2^K - 3 constraints + 2 public + 1 = 2^K rows, a full domain), compiled
by circom2, its witness computed by `snarkjs wtns calculate`. The zkey comes from
numba-cuzk's insecure setup of that r1cs (write_zkey), not from snarkjs: a snarkjs setup
needs a powers of tau of 2^K, and `powersoftau prepare phase2` alone took 74 s at 2^10
and 382 s at 2^12 on this 2-core machine (~4.5x per power: hours at 2^16). snarkjs
proves with such a zkey as with its own (tests/interop/test_reverse.py), and where a key
comes from does not change a prover's work.

Records (bench/results/snarkjs/), ms, medians of --runs after a warm-up, the
two provers' runs alternating so that other load on the machine hits both alike:
    snarkjs_prove_logK    snarkjs.groth16.prove(zkey, wtns) in one warm Node process
                          (bench/snarkjs_prove.cjs); params.cli_ms: `snarkjs groth16 prove`
                          as a command, Node's start and curve set-up included
    prove_zkey_logK_cpu   numba-cuzk's CPU backend from the same files to proof.json
                          (files.prove_files, trusted like snarkjs: no point checks) in one
                          process, kernels compiled by the warm-up; peer: snarkjs;
                          params.cli_cold_ms: one `numba-cuzk prove --cpu --trusted`
                          process, Python's start and Numba's compilation included
    prove_zkey_logK       the same on the GPU (--gpu), e.g. on the H200 with --dir holding
                          the zkey and wtns of a run here (it then needs neither Node nor circom)
Each size's last numba-cuzk proof is checked by `snarkjs groth16 verify` when snarkjs is there.
    python3 -m bench.snarkjs [--sizes 14,16] [--runs 5] [--dir build/bench-snarkjs] [--gpu] [--no-cold] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench import common
from numba_cuzk.groth16.files import prove_files
from numba_cuzk.groth16.formats import read_r1cs, write_vk_json, write_zkey
from numba_cuzk.groth16.setup import setup
from tests.interop.node import REPO, NodeTools

HARNESS = Path(__file__).with_name("snarkjs_prove.cjs")
INPUT = {"a": "3", "b": "1234567890123456789"}
CIRCUIT = """pragma circom 2.0.0;

template Chain(n) {{
    signal input a;
    signal input b;
    signal output c;
    signal x[n];

    x[0] <== a * b;
    for (var i = 1; i < n; i++) {{
        x[i] <== x[i - 1] * (i % 2 == 0 ? a : b);
    }}
    c <== x[n - 1];
}}

component main {{public [a]}} = Chain({n});
"""


@dataclass(frozen=True)
class Files:
    """One size's files, in ``folder``."""

    folder: Path
    name: str
    circom: Path
    r1cs: Path
    wtns: Path
    zkey: Path
    vk: Path

    @classmethod
    def at(cls, folder: Path, name: str) -> Files:
        path = lambda suffix: folder / f"{name}{suffix}"  # noqa: E731
        return cls(folder, name, path(".circom"), path(".r1cs"), path(".wtns"), path(".zkey"), path("_vk.json"))


def prepare(log_n: int, folder: Path, tools: NodeTools | str, gpu: bool) -> Files:
    """The circuit, witness and key of size 2^log_n in ``folder``; files already there
    (copied from another machine) are kept."""
    files = Files.at(folder, f"chain_log{log_n}")
    folder.mkdir(parents=True, exist_ok=True)
    if not files.wtns.exists():  # circom writes the r1cs first
        if isinstance(tools, str) or not tools.has("circom2"):
            why = tools if isinstance(tools, str) else f"circom2 is not installed under {tools.node_modules}"
            raise SystemExit(f"no {files.wtns}, and no circom2 to make it: {why}")
        files.circom.write_text(CIRCUIT.format(n=(1 << log_n) - 3))
        tools.circom2(files.circom, folder)
        (folder / "input.json").write_text(json.dumps(INPUT))
        tools.snarkjs("wtns", "calculate", folder / f"{files.name}_js" / f"{files.name}.wasm", folder / "input.json",
                      files.wtns)
    if not files.zkey.exists():
        start = time.perf_counter()
        pk = setup(read_r1cs(files.r1cs), gpu=gpu)
        write_zkey(files.zkey, pk)
        write_vk_json(files.vk, pk.verifying_key)
        print(f"2^{log_n}: numba-cuzk setup {time.perf_counter() - start:.1f} s", flush=True)
    return files


class WarmSnarkjs:
    """snarkjs.groth16.prove in one warm Node process (bench/snarkjs_prove.cjs)."""

    def __init__(self, tools: NodeTools, files: Files) -> None:
        self.proc = subprocess.Popen(["node", str(HARNESS), str(tools.node_modules), str(files.zkey), str(files.wtns)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{HARNESS.name} did not start (exit {self.proc.wait()})")

    def prove_ms(self) -> float:
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def bench_size(tools: NodeTools | str, files: Files, log_n: int, gpu: bool, runs: int, cold: bool) -> list[dict]:
    """snarkjs_prove_logK (when snarkjs is there) and prove_zkey_logK(_cpu): both warm, their
    proofs alternating, so that other load on the machine hits both alike."""
    proof, public = files.folder / "proof.json", files.folder / "public.json"
    ours = lambda: prove_files(files.zkey, files.wtns, proof, public, gpu=gpu, trusted=True)  # noqa: E731
    ours()  # warm-up: compiles the kernels
    snarkjs = None if isinstance(tools, str) else WarmSnarkjs(tools, files)
    snarkjs_ms, ours_ms, results = [], [], []
    for _ in range(runs):
        if snarkjs:
            snarkjs_ms.append(snarkjs.prove_ms())
        start = time.perf_counter()
        results.append(ours())
        ours_ms.append((time.perf_counter() - start) * 1e3)
    constraints = (1 << log_n) - 3
    records, peer = [], None
    if snarkjs:
        snarkjs.close()
        tools.snarkjs("groth16", "verify", files.vk, public, proof)  # the outside judge checks our last proof
        params = {"constraints": constraints, **_stats(snarkjs_ms), "cli_ms": _snarkjs_cli_ms(tools, files, runs),
                  "snarkjs": tools.version("snarkjs"), "node": _node_version(), "load_avg": os.getloadavg()[0]}
        records.append(common.record(f"snarkjs_prove_log{log_n}", statistics.median(snarkjs_ms), "ms",
                                     common.cpu_name(), params, timing=common.CALL_LATENCY))
        peer = {"name": f"snarkjs {params['snarkjs']} groth16 prove, warm Node process (same zkey, witness, cores)",
                "value": records[0]["value"], "unit": "ms"}
    params = {"constraints": constraints, **_stats(ours_ms), "steps_ms": _medians([r.steps_ms for r in results]),
              "prove_phases_ms": _medians([r.prove_ms for r in results]), "cli_cold_ms": _cold_cli_ms(files, gpu) if cold else None,
              "zkey": "numba-cuzk setup (write_zkey) of the circom r1cs", "load_avg": os.getloadavg()[0]}
    records.append(common.record(f"prove_zkey_log{log_n}" + ("" if gpu else "_cpu"), statistics.median(ours_ms), "ms",
                                 common.gpu_name() if gpu else common.cpu_name(), params, peer,
                                     timing=common.CALL_LATENCY))
    for r in records:
        print(f"{r['name']}: {r['value']:.0f} ms (min {r['params']['min_ms']:.0f}); {r['params']}", flush=True)
    return records


def _snarkjs_cli_ms(tools: NodeTools, files: Files, runs: int) -> float:
    """Median ms of `snarkjs groth16 prove` as a command: Node's start and curve set-up too."""
    walls = []
    for _ in range(runs):
        start = time.perf_counter()
        tools.snarkjs("groth16", "prove", files.zkey, files.wtns, files.folder / "snarkjs_proof.json",
                      files.folder / "snarkjs_public.json")
        walls.append((time.perf_counter() - start) * 1e3)
    return round(statistics.median(walls), 1)


def _cold_cli_ms(files: Files, gpu: bool) -> float:
    """ms of one `numba-cuzk prove --trusted` process: Python's start and Numba's compilation too."""
    cmd = [sys.executable, "-m", "numba_cuzk.cli", "prove", "--zkey", str(files.zkey), "--witness", str(files.wtns),
           "--proof", str(files.folder / "cli_proof.json"), "--public", str(files.folder / "cli_public.json"),
           "--trusted", "--json"] + ([] if gpu else ["--cpu"])
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=True, timeout=3600, cwd=REPO)
    return round((time.perf_counter() - start) * 1e3, 1)


def _node_version() -> str:
    return subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()


def _stats(ms: list[float]) -> dict:
    return {"runs": len(ms), "stat": "median", "min_ms": round(min(ms), 1), "runs_ms": _rounded(ms)}


def _rounded(values: list[float]) -> list[float]:
    return [round(v, 1) for v in values]


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    """Per key, the median over runs."""
    return {k: round(statistics.median(run[k] for run in runs), 1) for k in runs[0]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="14,16")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", default=str(REPO / "build" / "bench-snarkjs"))
    parser.add_argument("--gpu", action="store_true", help="numba-cuzk on the GPU (prove_zkey_logK)")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold `numba-cuzk prove` process (params."
                        "cli_cold_ms: its compilation takes minutes on a GPU host)")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    tools = NodeTools.find()
    for log_n in [int(x) for x in args.sizes.split(",") if x]:
        files = prepare(log_n, Path(args.dir) / f"log{log_n}", tools, args.gpu)
        print(f"wrote {common.write(bench_size(tools, files, log_n, args.gpu, args.runs, not args.no_cold), 'snarkjs', args.out)}",
              flush=True)

if __name__ == "__main__":
    main()
