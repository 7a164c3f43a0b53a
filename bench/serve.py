"""The daemon (`numba-cuzk serve`) against a process per proof and against the engine (issue 38).

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
    then --rounds rounds, each in this order, at each --rate-sizes size (the same zkey):
    engine_ms_per_proof_logK_mimc          this process's Engine (the daemon's settings,
                                           serve.server.engine_config) proving
                                           --back-to-back one-partition jobs submitted at once
    serve_ms_per_proof_logK_one_client     one client submitting as many back to back
                                           (SubmitProof), each awaited from its submission
    serve_ms_per_proof_logK_clients8       8 clients at once, each proving --per-client
    serve_proofs_per_s_log20               the 8 clients' rate, proofs/s
Per-proof times are the steady rate: from the first proof done to the last, over the
proofs between (the pipeline's fill left out, as for each of the three alike); each is
the median of the rounds, with min/max; the daemon's have the engine's figure of the same
call as their peer and their ratio to it (issue 38's goal: <= 1.10).
Every latency record's params.split_ms holds the median of each step of a proof through
the daemon (bench/serve_split.py: the client process's own start, imports and writes,
transport, each of the daemon's steps from its live timeline), params.client_cpu_ms
the client process's CPU time (user + system), and params.python_grpc_ms the median of
as many `python -c "import grpc"` processes run alternating with the clients: what any
Python client on grpcio pays on this host before it sends a byte (its interpreter, site's
.pth files, grpc's import), so that a latency which moves between hosts shows how much of
the move is theirs.
Records: bench/results/serve/serve-<host>-<commit>-<date>.json, params.timing "call-latency".
    python3 -m bench.serve --part cpu [--runs 5] [--dir build/bench-snarkjs] [--out FILE]
    python3 -m bench.serve --part gpu [--runs 10] [--rounds 3] [--dir build/bench-serve]
        [--timeline FILE] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from bench import common, serve_split
from bench.snarkjs import Files, prepare
from tests.interop.node import REPO, NodeTools

CLIENTS = 8


def _numba_cuzk(*args) -> list[str]:
    return [sys.executable, "-m", "numba_cuzk.launch", *map(str, args)]


@dataclass(frozen=True)
class ProcessRun:
    """One process: wall and CPU (user + system) ms, its spawn and exit as this process
    saw them (time.monotonic_ns), and its stdout's JSON (the client's --json) or None."""

    wall_ms: float
    cpu_ms: float
    spawn_ns: int
    exit_ns: int
    reply: dict | None


def run_process(cmd: list[str], cwd: Path, json_out: bool = False) -> ProcessRun:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    spawn = time.monotonic_ns()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    end = time.monotonic_ns()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1e3
    return ProcessRun((end - spawn) / 1e6, cpu, spawn, end, json.loads(done.stdout) if json_out else None)


class Daemon:
    """`numba-cuzk serve` on a temporary socket, the keys preloaded, its timeline live at
    ``timeline``, until ``stop``."""

    def __init__(self, zkeys: list[Path], cpu: bool, timeline: Path | None = None) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="bench-serve-")
        self.address = f"unix:{self.folder.name}/serve.sock"
        self.timeline = Path(timeline or Path(self.folder.name) / "serve.timeline.jsonl").resolve()
        preload = [a for z in zkeys for a in ("--preload", z)]
        self.proc = subprocess.Popen(_numba_cuzk("serve", "--listen", self.address, "--timeline", self.timeline,
                                                 *preload, *["--cpu"] * cpu), cwd=REPO, stdout=subprocess.PIPE,
                                     text=True)
        line = self.proc.stdout.readline()
        if "ready" not in line:
            raise SystemExit(f"the daemon did not start (exit {self.proc.wait()})")
        print(line.strip(), flush=True)

    def events(self):
        """Its timeline as read now: (t0_ns, events by job)."""
        from numba_cuzk.timeline.reader import read

        timeline = read(self.timeline)
        return timeline.header["t0_ns"], serve_split.job_events(timeline.events)

    def status(self) -> dict:
        """GetStatus's JSON (docs/daemon.md)."""
        from numba_cuzk.serve.client import ProverClient

        with ProverClient(self.address) as client:
            return client.status()

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(120)
        self.folder.cleanup()


def _client_cmd(daemon: Daemon, files: Files, out: Path) -> list[str]:
    return _numba_cuzk("prove", "--server", daemon.address, "--zkey", files.zkey, "--witness", files.wtns,
                       "--proof", out / "proof.json", "--public", out / "public.json", "--json")


GRPC_FLOOR = [sys.executable, "-c", "import grpc"]  # a Python process that imports grpc, nothing else


def run_alternating(cmd: list[str], runs: int) -> tuple[list[ProcessRun], list[ProcessRun]]:
    """``runs`` client processes (``cmd``, its --json read), each followed by a GRPC_FLOOR
    process, so that the host's load hits both alike: (clients, floors)."""
    clients, floors = [], []
    for _ in range(runs):
        clients.append(run_process(cmd, REPO, json_out=True))
        floors.append(run_process(GRPC_FLOOR, REPO))
    return clients, floors


def latency_params(runs: list[ProcessRun], floors: list[ProcessRun], daemon: Daemon) -> dict:
    """The client processes' walls, CPU, the daemon's queue and proving ms (its replies),
    the median split of a proof (bench/serve_split.py), and the GRPC_FLOOR processes' walls
    (``floors``, run alternating with them)."""
    t0_ns, by_job = daemon.events()
    splits = [serve_split.split_ms(r.spawn_ns, r.exit_ns, r.reply.get("t_ns", {}), by_job.get(r.reply["job"], []),
                                   t0_ns) for r in runs]
    steps = serve_split.median_steps(splits)
    kernels = [serve_split.kernel_ms(by_job.get(r.reply["job"], [])) for r in runs]
    return {"runs": len(runs), "stat": "median", "walls_ms": [round(r.wall_ms, 1) for r in runs],
            "client_cpu_ms": round(statistics.median(r.cpu_ms for r in runs), 1),
            **{f"daemon_{k}": round(statistics.median(r.reply[k] for r in runs), 1) for k in ("queued_ms", "prove_ms")
               if all(k in r.reply for r in runs)},
            "split_ms": steps, **serve_split.sides_ms(steps), "kernel_ms": round(statistics.median(kernels), 3),
            "python_grpc_ms": round(statistics.median(r.wall_ms for r in floors), 1),
            "python_grpc_walls_ms": [round(r.wall_ms, 1) for r in floors]}


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
            "python_grpc": GRPC_FLOOR,
        }
        for cmd in commands.values():  # warm-up: caches, page cache, the daemon's first proof
            run_process(cmd, REPO)
        done: dict[str, list[ProcessRun]] = {name: [] for name in commands}
        for r in range(runs):
            for name, cmd in commands.items():
                done[name].append(run_process(cmd, REPO, json_out=name == "client"))
            print(f"round {r + 1}: " + ", ".join(f"{n} {w[-1].wall_ms:.0f} ms" for n, w in done.items()), flush=True)
        _verify(tools, files, out)
        client = latency_params(done["client"], done["python_grpc"], daemon)
    finally:
        daemon.stop()
    ms = {name: statistics.median(r.wall_ms for r in w) for name, w in done.items()}
    device = common.cpu_name()
    params = {"runs": runs, "stat": "median", "alternating": list(commands),
              "what": "a whole process per proof, wall clock",
              "walls_ms": {n: [round(r.wall_ms, 1) for r in w] for n, w in done.items()},
              "cpu_ms": {n: round(statistics.median(r.cpu_ms for r in w), 1) for n, w in done.items()}}
    snarkjs = {"name": f"snarkjs groth16 prove CLI {tools.version('snarkjs')} (same run)",
               "value": round(ms["snarkjs"], 1), "unit": "ms"}
    return [
        common.record("serve_client_prove_log14_cpu", ms["client"], "ms", device,
                      {**params, **client, "ratio_to_snarkjs": round(ms["client"] / ms["snarkjs"], 3)}, snarkjs,
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


def steady_ms(done_ns: list[int]) -> float:
    """ms per proof from the first proof done to the last (the pipeline's fill left out)."""
    done_ns = sorted(done_ns)
    return (done_ns[-1] - done_ns[0]) / 1e6 / (len(done_ns) - 1)


class InProcessEngine:
    """An Engine in this process with the daemon's settings (serve.server.engine_config),
    proving one key's witness as ``count`` one-partition jobs submitted at once (the
    daemon's jobs are one each)."""

    def __init__(self, zkey: Path, wtns: Path, timeline: Path, cpu: bool) -> None:
        from numba_cuzk.engine import Engine, Job
        from numba_cuzk.groth16.formats import read_wtns
        from numba_cuzk.groth16.key_checks import load_checked_key
        from numba_cuzk.serve.server import ServeConfig, engine_config

        self.pk, self.witness, self.job = load_checked_key(zkey), read_wtns(wtns), Job
        self.engine = Engine(engine_config(ServeConfig(cpu=cpu), timeline))
        self.rounds = 0
        self._run(2)  # the key made resident (compiled, graphs captured), the pipeline run once

    def _run(self, count: int) -> list[int]:
        """``count`` jobs submitted at once, waited for; when each was done (monotonic ns)."""
        self.rounds += 1
        done: list[int] = []
        futures = [self.engine.submit(self.job(self.pk, [self.witness], name=f"round{self.rounds}-{k}"))
                   for k in range(count)]
        for future in futures:
            future.add_done_callback(lambda f: done.append(time.monotonic_ns()))
        for future in futures:
            future.result()
        return done

    def per_proof_ms(self, count: int) -> float:
        """Steady ms per proof of ``count`` jobs submitted at once."""
        return steady_ms(self._run(count))

    def close(self) -> None:
        self.engine.close()


def one_client_ms(address: str, witness: bytes, zkey: Path, count: int) -> float:
    """Steady ms per proof of ``count`` proofs submitted by one client back to back, each
    awaited in a thread of its own from its submission on. Awaited in order after the last
    submission, the proofs done while the client was still sending witnesses (2^20: ~100 ms
    each) were all stamped at once, which shrank the span to 7.4 ms "per proof" beside the
    engine's 85 (2026-12-04)."""
    from numba_cuzk.serve.client import ProverClient

    done: list[int] = []

    def wait(client: ProverClient, job: str) -> None:
        client.await_proof(job)
        done.append(time.monotonic_ns())
    with ProverClient(address) as client:
        waiters = []
        for _ in range(count):
            waiters.append(threading.Thread(target=wait, args=(client, client.submit(witness, zkey=zkey))))
            waiters[-1].start()
        for w in waiters:
            w.join()
    if len(done) != count:
        raise SystemExit(f"{count - len(done)} of the client's proofs failed")
    return steady_ms(done)


def clients_ms(address: str, witness: bytes, zkey: Path, clients: int, each: int) -> float:
    """Steady ms per proof of ``clients`` clients at once, each proving ``each`` in turn."""
    from numba_cuzk.serve.client import ProverClient

    done: list[int] = []

    def client() -> None:
        with ProverClient(address) as c:
            for _ in range(each):
                c.prove(witness, zkey=zkey)
                done.append(time.monotonic_ns())
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if len(done) != clients * each:
        raise SystemExit(f"{clients * each - len(done)} of the clients' proofs failed")
    return steady_ms(done)


@dataclass
class Rates:
    """One size's steady ms per proof, a list per way, one figure a round."""

    engine: list[float]
    one_client: list[float]
    clients: list[float]


def measure_rates(daemon: Daemon, engine: InProcessEngine, files: Files, rates: Rates, back_to_back: int,
                  per_client: int) -> None:
    """One round: the engine, one client, the clients, in that order, at one size."""
    witness = files.wtns.read_bytes()
    rates.engine.append(engine.per_proof_ms(back_to_back))
    rates.one_client.append(one_client_ms(daemon.address, witness, files.zkey, back_to_back))
    rates.clients.append(clients_ms(daemon.address, witness, files.zkey, CLIENTS, per_client))


def _spread(values: list[float]) -> dict:
    return {"rounds": [round(v, 2) for v in values], "min": round(min(values), 2), "max": round(max(values), 2)}


def rate_records(log_n: int, rates: Rates, device: str, params: dict) -> list[dict]:
    """The engine's, one client's and the clients' steady ms per proof at 2^log_n (medians
    of the rounds), the daemon's with the engine's as peer and their ratio to it."""
    engine = statistics.median(rates.engine)
    peer = {"name": "the Engine in the bench's process, the daemon's settings (same call)", "value": round(engine, 3),
            "unit": "ms", "timing": common.CALL_LATENCY}
    records = [common.record(f"engine_ms_per_proof_log{log_n}_mimc", engine, "ms", device,
                             {**params, **_spread(rates.engine)}, timing=common.CALL_LATENCY)]
    one = "one client submitting them back to back, each awaited from its submission"
    for way, values, what in (("one_client", rates.one_client, one),
                              (f"clients{CLIENTS}", rates.clients, f"{CLIENTS} clients, each proving in turn")):
        ms = statistics.median(values)
        records.append(common.record(f"serve_ms_per_proof_log{log_n}_{way}", ms, "ms", device,
                                     {**params, **_spread(values), "what": what,
                                      "ratio_to_engine": round(ms / engine, 3)}, peer, timing=common.CALL_LATENCY))
    if log_n == 20:  # the figure of the first H200 run, kept by name
        records.append(common.record("serve_proofs_per_s_log20", 1e3 / statistics.median(rates.clients), "proofs/s",
                                     device, {**params, "clients": CLIENTS}, timing=common.CALL_LATENCY))
    return records


def gpu_part(folder: Path, runs: int, rounds: int, log_sizes: tuple[int, ...], rate_sizes: tuple[int, ...],
             back_to_back: int, per_client: int, timeline: Path | None) -> list[dict]:
    """Client latency (a process per proof, split) at each size; then rounds of the engine,
    one client and the clients back to back at each rate size."""
    from numba_cuzk import backend

    gpu = backend.cuda_available()
    device = common.gpu_name() if gpu else common.cpu_name()
    sizes = {log_n: builtin_files(log_n, folder / f"mimc_log{log_n}", gpu)
             for log_n in sorted({*log_sizes, *rate_sizes})}
    out = Path(tempfile.mkdtemp(prefix="bench-serve-out-"))
    daemon = Daemon([f.zkey for f in sizes.values()], cpu=not gpu, timeline=timeline)
    records, engines = [], {}
    try:
        for log_n in log_sizes:
            cmd = _client_cmd(daemon, sizes[log_n], out)
            run_process(cmd, REPO)
            done, floors = run_alternating(cmd, runs)
            params = {"circuit": "mimc", "what": "a client process per proof, wall clock",
                      **latency_params(done, floors, daemon)}
            records.append(common.record(f"serve_prove_log{log_n}", statistics.median(r.wall_ms for r in done), "ms",
                                         device, params, timing=common.CALL_LATENCY))
            print(f"2^{log_n}: client process {records[-1]['value']:.1f} ms (its own {params['client_process_ms']} "
                  f"ms, the call {params['call_ms']} ms; python with grpc alone {params['python_grpc_ms']} ms): "
                  f"{params['split_ms']}", flush=True)
        engine_timeline = timeline.parent if timeline else Path(tempfile.mkdtemp(prefix="bench-serve-engine-"))
        rates = {log_n: Rates([], [], []) for log_n in rate_sizes}
        for log_n in rate_sizes:
            engines[log_n] = InProcessEngine(sizes[log_n].zkey, sizes[log_n].wtns,
                                             engine_timeline / f"engine-log{log_n}.jsonl", cpu=not gpu)
        for r in range(rounds):
            for log_n in rate_sizes:
                measure_rates(daemon, engines[log_n], sizes[log_n], rates[log_n], back_to_back, per_client)
                got = rates[log_n]
                print(f"round {r + 1}, 2^{log_n}: ms per proof: engine {got.engine[-1]:.2f}, one client "
                      f"{got.one_client[-1]:.2f}, {CLIENTS} clients {got.clients[-1]:.2f}", flush=True)
        params = {"circuit": "mimc", "back_to_back": back_to_back, "per_client": per_client, "stat": "median",
                  "daemon_max_running": daemon.status()["queue"]["max_running"]}
        for log_n in rate_sizes:
            records += rate_records(log_n, rates[log_n], device, params)
    finally:
        for engine in engines.values():
            engine.close()
        daemon.stop()
    return records


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("cpu", "gpu"), required=True)
    parser.add_argument("--runs", type=int, default=5, help="client processes per latency figure")
    parser.add_argument("--dir", default=None, help="where the circuits' files go (default: build/bench-snarkjs "
                        "for the CPU part, build/bench-serve for the GPU part)")
    parser.add_argument("--sizes", default="14,20", help="the GPU part's latency sizes (log2)")
    parser.add_argument("--rate-sizes", default="20", help="the GPU part's back-to-back sizes (log2; '' for none)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of engine, one client, clients")
    parser.add_argument("--back-to-back", type=int, default=16, help="proofs per round of the engine and one client")
    parser.add_argument("--per-client", type=int, default=4, help=f"proofs per client of the {CLIENTS}, a round")
    parser.add_argument("--timeline", help="keep the daemon's timeline (JSONL) here, and the engines' beside it "
                        "(engine-logK.jsonl)")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    folder = Path(args.dir or REPO / "build" / ("bench-snarkjs" if args.part == "cpu" else "bench-serve"))
    sizes = lambda text: tuple(int(x) for x in text.split(",") if x)  # noqa: E731
    records = cpu_part(folder, args.runs) if args.part == "cpu" else gpu_part(
        folder, args.runs, args.rounds, sizes(args.sizes), sizes(args.rate_sizes), args.back_to_back, args.per_client,
        Path(args.timeline) if args.timeline else None)
    for r in records:
        print(f"{r['name']}: {r['value']} {r['unit']}" + (f" (peer {r['peer']['value']} ms)" if "peer" in r else ""))
    print(f"wrote {common.write(records, 'serve', args.out)}", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
