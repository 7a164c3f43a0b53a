"""The daemon (`numba-cuzk serve`) against a process per proof (issue 38).

CPU part (--part cpu), on one 2^14 circom circuit (bench/snarkjs.py's chain; its zkey
from numba-cuzk's setup), the three alternating within each round so that other load
hits them alike, each a whole process timed by its wall clock, as a user's shell loop
pays it:
    serve_client_prove_log14_cpu   `numba-cuzk prove --server` against a daemon (--cpu,
                                   the key preloaded); peer: `snarkjs groth16 prove`
    oneshot_prove_log14_cpu        `numba-cuzk prove --cpu` (kernels from the cache)
GPU part (--part gpu), on the built-in MiMC circuit at 2^14 and 2^20 (made by numba-cuzk's
setup on the GPU: no Node needed), the daemon on every visible GPU:
    serve_prove_log14, serve_prove_log20   a client process's wall time per proof
    serve_proofs_per_s_log20               8 Python clients at once, proofs per second
Records: bench/results/serve/serve-<host>-<commit>-<date>.json, params.timing "call-latency" (throughput:
"device-throughput"), medians of --runs after one warm-up.
    python3 -m bench.serve --part cpu [--runs 5] [--dir build/bench-snarkjs] [--out FILE]
    python3 -m bench.serve --part gpu [--runs 10] [--dir build/bench-serve]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench import common
from bench.snarkjs import Files, prepare
from tests.interop.node import REPO, NodeTools

CLIENTS = 8
PROOFS_PER_CLIENT = 8


def _numba_cuzk(*args) -> list[str]:
    return [sys.executable, "-m", "numba_cuzk.launch", *map(str, args)]


def _wall_s(cmd: list[str], cwd: Path, replies: list | None = None) -> float:
    """The command's wall time (s); with ``replies``, its stdout's JSON is appended there."""
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    if replies is not None:
        replies.append(json.loads(done.stdout))
    return wall


class Daemon:
    """`numba-cuzk serve` on a temporary socket, the keys preloaded, until ``stop``."""

    def __init__(self, zkeys: list[Path], cpu: bool) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="bench-serve-")
        self.address = f"unix:{self.folder.name}/serve.sock"
        preload = [a for z in zkeys for a in ("--preload", z)]
        self.proc = subprocess.Popen(_numba_cuzk("serve", "--listen", self.address, *preload, *["--cpu"] * cpu),
                                     cwd=REPO, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if "ready" not in line:
            raise SystemExit(f"the daemon did not start (exit {self.proc.wait()})")
        print(line.strip(), flush=True)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(120)
        self.folder.cleanup()


def _client_cmd(daemon: Daemon, files: Files, out: Path) -> list[str]:
    return _numba_cuzk("prove", "--server", daemon.address, "--zkey", files.zkey, "--witness", files.wtns,
                       "--proof", out / "proof.json", "--public", out / "public.json")


def _verify(tools: NodeTools, files: Files, out: Path) -> None:
    verdict = tools.snarkjs("groth16", "verify", files.vk, out / "public.json", out / "proof.json", check=False)
    if verdict.returncode != 0 or "OK" not in verdict.stdout:
        raise SystemExit(f"snarkjs does not accept the daemon's proof: {verdict.stdout}")


def cpu_part(folder: Path, runs: int) -> list[dict]:
    tools = NodeTools.find()
    if isinstance(tools, str):
        raise SystemExit(f"the CPU part needs snarkjs: {tools}")
    files = prepare(14, folder / "log14", tools, gpu=False)
    out = Path(tempfile.mkdtemp(prefix="bench-serve-out-"))
    daemon = Daemon([files.zkey], cpu=True)
    try:
        commands = {
            "client": _client_cmd(daemon, files, out),
            "oneshot": _numba_cuzk("prove", "--cpu", "--zkey", files.zkey, "--witness", files.wtns,
                                   "--proof", out / "one.json", "--public", out / "one_public.json"),
            "snarkjs": [str(tools.node_modules / ".bin" / "snarkjs"), "groth16", "prove", files.zkey, files.wtns,
                        out / "s.json", out / "s_public.json"],
        }
        for cmd in commands.values():  # warm-up: caches, page cache, the daemon's first proof
            _wall_s(cmd, REPO)
        commands["client"] = commands["client"] + ["--json"]  # the daemon's queue and proving ms, besides the wall
        walls: dict[str, list[float]] = {name: [] for name in commands}
        replies: list[dict] = []
        for r in range(runs):
            for name, cmd in commands.items():
                walls[name].append(_wall_s(cmd, REPO, replies if name == "client" else None) * 1e3)
            print(f"round {r + 1}: " + ", ".join(f"{n} {w[-1]:.0f} ms" for n, w in walls.items()), flush=True)
        _verify(tools, files, out)
    finally:
        daemon.stop()
    ms = {name: statistics.median(w) for name, w in walls.items()}
    device = common.cpu_name()
    params = {"timing": "call-latency", "runs": runs, "stat": "median", "alternating": list(commands),
              "what": "a whole process per proof, wall clock", "walls_ms": {n: [round(x, 1) for x in w]
                                                                            for n, w in walls.items()}}
    snarkjs = {"name": f"snarkjs groth16 prove CLI {tools.version('snarkjs')} (same run)", "value": round(ms["snarkjs"], 1),
               "unit": "ms"}
    inside = {f"daemon_{k}": round(statistics.median(r[k] for r in replies), 1) for k in ("queued_ms", "prove_ms")}
    return [
        common.record("serve_client_prove_log14_cpu", ms["client"], "ms", device,
                      {**params, **inside, "ratio_to_snarkjs": round(ms["client"] / ms["snarkjs"], 3)}, snarkjs,
                      timing=common.CALL_LATENCY),
        common.record("oneshot_prove_log14_cpu", ms["oneshot"], "ms", device,
                      {**params, "ratio_to_snarkjs": round(ms["oneshot"] / ms["snarkjs"], 3)}, snarkjs,
                      timing=common.CALL_LATENCY),
    ]


def builtin_files(log_n: int, folder: Path, gpu: bool) -> Files:
    """The built-in MiMC circuit at 2^log_n: its zkey (insecure setup), verification key and
    witness, written with numba-cuzk's own writers (no Node or circom needed); files
    already there are kept."""
    files = Files.at(folder, f"mimc_log{log_n}")
    if not files.zkey.exists():
        from numba_cuzk.circuits import build
        from numba_cuzk.groth16.formats import write_vk_json, write_wtns, write_zkey
        from numba_cuzk.groth16.setup import setup

        folder.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        system, values = build("mimc", log_n)
        pk = setup(system, gpu=gpu)
        write_wtns(files.wtns, values)
        write_vk_json(files.vk, pk.verifying_key)
        write_zkey(files.zkey, pk)
        print(f"2^{log_n}: mimc built and set up in {time.perf_counter() - start:.1f} s", flush=True)
    return files


def gpu_part(folder: Path, runs: int, log_sizes: tuple[int, ...] = (14, 20)) -> list[dict]:
    """Client latency at each size; 8 clients' proofs/s at the last."""
    from numba_cuzk import backend
    from numba_cuzk.serve.client import ProverClient

    gpu = backend.cuda_available()
    sizes = {log_n: builtin_files(log_n, folder / f"mimc_log{log_n}", gpu) for log_n in log_sizes}
    top = log_sizes[-1]
    out = Path(tempfile.mkdtemp(prefix="bench-serve-out-"))
    daemon = Daemon([f.zkey for f in sizes.values()], cpu=False)
    records = []
    try:
        device = common.gpu_name() if gpu else common.cpu_name()
        for log_n, files in sizes.items():
            cmd = _client_cmd(daemon, files, out)
            _wall_s(cmd, REPO)
            walls = [_wall_s(cmd, REPO) * 1e3 for _ in range(runs)]
            records.append(common.record(f"serve_prove_log{log_n}", statistics.median(walls), "ms", device,
                                         {"runs": runs, "stat": "median", "circuit": "mimc",
                                          "what": "a client process per proof, wall clock",
                                          "walls_ms": [round(w, 1) for w in walls]}, timing=common.CALL_LATENCY))
            print(f"2^{log_n}: client process {statistics.median(walls):.1f} ms", flush=True)
        files = sizes[top]
        witness = files.wtns.read_bytes()

        def client() -> None:
            with ProverClient(daemon.address) as c:
                for _ in range(PROOFS_PER_CLIENT):
                    c.prove(witness, zkey=files.zkey)
        client()  # warm
        start = time.perf_counter()
        threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        rate = CLIENTS * PROOFS_PER_CLIENT / (time.perf_counter() - start)
        records.append(common.record(f"serve_proofs_per_s_log{top}", rate, "proofs/s", device,
                                     {"circuit": "mimc", "clients": CLIENTS, "proofs_per_client": PROOFS_PER_CLIENT},
                                     timing=common.DEVICE_THROUGHPUT))
        print(f"2^{top}: {rate:.2f} proofs/s with {CLIENTS} clients", flush=True)
    finally:
        daemon.stop()
    return records


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("cpu", "gpu"), required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", default=None, help="where the circuits' files go (default: build/bench-snarkjs "
                        "for the CPU part, build/bench-serve for the GPU part)")
    parser.add_argument("--sizes", default="14,20", help="the GPU part's sizes (log2): latency at each, "
                        "throughput at the last")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    folder = Path(args.dir or REPO / "build" / ("bench-snarkjs" if args.part == "cpu" else "bench-serve"))
    records = cpu_part(folder, args.runs) if args.part == "cpu" else gpu_part(
        folder, args.runs, tuple(int(x) for x in args.sizes.split(",")))
    for r in records:
        print(f"{r['name']}: {r['value']} {r['unit']}" + (f" (peer {r['peer']['value']} ms)" if "peer" in r else ""))
    print(f"wrote {common.write(records, 'serve', args.out)}", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
