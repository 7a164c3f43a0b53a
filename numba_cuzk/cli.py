"""The ``numba-cuzk`` command line. One function per command; each imports what it needs
inside its body, so ``info`` answers without compiling anything.

Exit codes: 0 success, 1 a check failed, 2 a user error. A command reports a user error
by raising ``typer.BadParameter``: one line on stderr, no traceback.
"""

from __future__ import annotations

import json
import platform
import random
import sys
import time
import warnings
from dataclasses import dataclass
from importlib import metadata

import numpy as np
import typer
from rich.console import Console
from rich.table import Table

from numba_cuzk import __version__, backend


class _App(typer.Typer):
    """A Typer app whose usage errors print one line ("error: ...") instead of a panel."""

    def __call__(self, *args, **kwargs):
        try:
            code = super().__call__(*args, standalone_mode=False, **kwargs)
        except Exception as exc:
            # click's ClickException and Abort, matched by name: newer typer releases
            # vendor click, so the classes depend on the installed typer.
            names = {cls.__name__ for cls in type(exc).__mro__}
            if "ClickException" in names:
                if exc.format_message():  # empty after no_args_is_help printed the help
                    typer.echo(f"error: {exc.format_message()}", err=True)
                sys.exit(exc.exit_code)
            if "Abort" in names:
                sys.exit(130)
            raise
        sys.exit(code if isinstance(code, int) else 0)


app = _App(
    help="A Groth16 prover for BLS12-381 on Numba CUDA kernels.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
console = Console()
GIB = 1 << 30


def _dist_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "n/a"


@app.command()
def info(as_json: bool = typer.Option(False, "--json", help="Print the report as JSON.")) -> None:
    """Versions, CUDA toolchain, GPUs, and the backend kernels will run on."""
    report = {
        "numba_cuzk": __version__,
        "python": platform.python_version(),
        **{name.replace("-", "_"): _dist_version(name) for name in ("numba", "numba-cuda", "numpy", "llvmlite")},
        "cuda": backend.describe_toolchain(),
        "gpus": backend.describe_devices(),
        "backend": backend.backend_name(),
    }
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    table = Table(title=f"numba-cuzk {__version__}", show_header=False)
    for key in ("python", "numba", "numba_cuda", "numpy", "llvmlite"):
        table.add_row(key.replace("_", "-"), report[key])
    for key, value in report["cuda"].items():
        table.add_row(f"cuda {key.replace('_', ' ')}", value)
    for gpu in report["gpus"] or [None]:
        memory = gpu and gpu["total_memory_bytes"]
        table.add_row(
            "gpu" if gpu is None else f"gpu {gpu['id']}",
            "none" if gpu is None else
            f"{gpu['name']}, cc {gpu['compute_capability']}, "
            + (f"{memory / GIB:.1f} GiB" if memory else "memory n/a"),
        )
    table.add_row("backend", f"[bold]{report['backend']}[/bold]")
    console.print(table)


@dataclass
class CheckResult:
    field: str
    target: str  # "cpu" (numpy arrays) or "gpu" (device arrays)
    check: str
    n: int
    first_ms: float | None  # first call: includes Numba's JIT compilation; None: not timed
    second_ms: float | None
    error: str  # "" when the check passed


def _field_cases(params, count: int, seed: int) -> tuple[list[int], list[int], list[int]]:
    """Operands a, b, c: every pair of edge values (0, 1, p-1), then ``count`` random."""
    p = params.modulus
    edges = (0, 1, p - 1)
    rng = random.Random(f"{params.name}:{seed}")
    a = [x for x in edges for _ in edges] + [rng.randrange(p) for _ in range(count)]
    b = [y for _ in edges for y in edges] + [rng.randrange(p) for _ in range(count)]
    c = [edges[i % 3] for i in range(9)] + [rng.randrange(p) for _ in range(count)]
    return a, b, c


def _first_mismatch(got: list[int], want: list[int]) -> str:
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return f"element {i}: got {g:#x}, want {w:#x}"
    return "" if len(got) == len(want) else f"{len(got)} results for {len(want)} inputs"


def _check_field(params, ref, count: int, seed: int, targets: list[str]) -> list[CheckResult]:
    """mul_sub and batch_inverse of ``params`` against the Python-int reference."""
    from numba import cuda

    from numba_cuzk.field import codec, kernels

    a, b, c = _field_cases(params, count, seed)
    try:
        mont = [codec.to_montgomery(codec.to_limbs(v, params), params) for v in (a, b, c)]
        round_trip = codec.from_limbs(codec.from_montgomery(mont[0], params), params)
        error = _first_mismatch(round_trip, a)
    except Exception as exc:  # report a broken codec as a failed check, not a crash
        error = f"{type(exc).__name__}: {exc}"
    results = [CheckResult(params.name, "cpu", "round trip", len(a), None, None, error)]
    if error:
        return results
    checks = {
        "mul_sub": (lambda out, x, y, z: kernels.mul_sub(out, x, y, z, params=params), mont,
                    [ref.sub(ref.mul(x, y), z) for x, y, z in zip(a, b, c)]),
        "batch_inverse": (lambda out, x: kernels.batch_inverse(out, x, params=params), mont[:1],
                          [ref.inverse(x) if x else 0 for x in a]),  # the kernels' 1/0 = 0
    }
    for target in targets:
        to_target = cuda.to_device if target == "gpu" else (lambda x: x)
        for name, (run, inputs, want) in checks.items():
            args = [to_target(x) for x in inputs]
            out = to_target(np.empty_like(inputs[0]))
            timings, error = [], ""
            try:
                for _ in range(2):
                    start = time.perf_counter()
                    run(out, *args)
                    if target == "gpu":
                        cuda.synchronize()
                    timings.append(1e3 * (time.perf_counter() - start))
                host = out.copy_to_host() if target == "gpu" else out
                error = _first_mismatch(codec.from_limbs(codec.from_montgomery(host, params), params), want)
            except Exception as exc:  # report a broken kernel as a failed check, not a crash
                error = f"{type(exc).__name__}: {exc}"
            timings += [None] * (2 - len(timings))
            results.append(CheckResult(params.name, target, name, len(a), *timings, error))
    return results


@app.command()
def selfcheck(
    count: int = typer.Option(1000, "--count", "-n", min=0, help="Random elements per field, besides the edge values."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random elements."),
) -> None:
    """Check the field kernels against Python integers: on the CPU, and on the GPU if one is present."""
    from numba_cuzk.field.params import FQ, FR
    from numba_cuzk.field.reference import fq, fr

    targets = ["cpu", "gpu"] if backend.cuda_available() else ["cpu"]
    console.print(f"backend: [bold]{backend.backend_name()}[/bold]; checking on {' and '.join(targets)}")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*under-utilization")  # small grids are intended here
        results = [r for params, ref in ((FR, fr), (FQ, fq)) for r in _check_field(params, ref, count, seed, targets)]

    table = Table(title="numba-cuzk selfcheck", caption="1st ms includes Numba's JIT compilation")
    for column in ("field", "target", "check", "n", "1st ms", "2nd ms", "result"):
        table.add_column(column, justify="right" if "ms" in column or column == "n" else "left")
    for r in results:
        ms = ["-" if t is None else f"{t:.1f}" for t in (r.first_ms, r.second_ms)]
        verdict = "[green]pass[/green]" if not r.error else f"[red]FAIL[/red] {r.error}"
        table.add_row(r.field, r.target, r.check, str(r.n), *ms, verdict)
    console.print(table)
    failed = [r for r in results if r.error]
    if failed:
        console.print(f"[red]{len(failed)} of {len(results)} checks failed[/red]")
        raise typer.Exit(1)
    console.print(f"[green]all {len(results)} checks passed[/green]")


@app.command()
def demo(
    circuit: str = typer.Option("mimc", "--circuit", help="Built-in circuit: mimc, merkle or bit_heavy."),
    log_constraints: int = typer.Option(10, "--log-constraints", "-k", min=4, max=24,
                                        help="Size: at most 2^K constraints."),
    proofs: int = typer.Option(2, "--proofs", min=1, help="Proofs to make (the first includes compilation)."),
    cpu: bool = typer.Option(False, "--cpu", help="Use the CPU backend even when a GPU is present."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Build a circuit, set it up (insecure, local), prove, verify, and show where the time went."""
    from dataclasses import asdict

    from numba_cuzk.circuits import CIRCUITS
    from numba_cuzk.circuits.demo import run_demo

    if circuit not in CIRCUITS:
        raise typer.BadParameter(f"{circuit!r} is not one of {', '.join(CIRCUITS)}", param_hint="'--circuit'")
    gpu = False if cpu else None
    with console.status("starting") as status, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*under-utilization")
        report = run_demo(circuit, log_constraints, proofs, gpu, progress=lambda step: status.update(step))
    if as_json:
        typer.echo(json.dumps(asdict(report), indent=2))
    else:
        _print_demo(report)
    if not all(report.verified):
        raise typer.Exit(1)


def _print_demo(report) -> None:
    console.print(f"{report.circuit}: {report.constraints} constraints, {report.wires} wires, "
                  f"backend [bold]{report.backend}[/bold]; build {report.build_ms:.0f} ms, "
                  f"setup {report.setup_ms:.0f} ms (insecure: local toxic waste)")
    unit = "device ms" if report.backend == "gpu" else "ms"
    table = Table(title="time by phase", caption="proof 1 includes Numba's JIT compilation; epilogue is host time")
    table.add_column(f"phase ({unit})")
    for k in range(len(report.phases)):
        table.add_column(f"proof {k + 1}", justify="right")
    for name in report.phases[0]:
        table.add_row(name, *(f"{p.get(name, 0.0):.2f}" for p in report.phases))
    table.add_row("[bold]total wall[/bold]", *(f"[bold]{ms:.1f}[/bold]" for ms in report.prove_ms))
    table.add_row("verified", *("[green]yes[/green]" if ok else "[red]NO[/red]" for ok in report.verified))
    console.print(table)


@app.command()
def timeline(
    file: str = typer.Argument(..., metavar="FILE", help="A timeline (JSONL) written by the engine."),
    png: str | None = typer.Option(None, "--png", help="Also draw the timeline as a Gantt chart to this PNG."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
    window: str = typer.Option("whole", "--window", help="whole: the whole run; steady: without warm-up and drain."),
) -> None:
    """Honest GPU utilization from a timeline: host brackets vs device-busy, idle time by cause,
    kernel efficiency, synthesis/GPU balance."""
    from numba_cuzk.timeline import analysis, reader, report

    if window not in analysis.WINDOWS:
        raise typer.BadParameter(f"{window!r} is not one of {', '.join(analysis.WINDOWS)}", param_hint="'--window'")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", reader.TimelineWarning)
        try:
            parsed = reader.read(file)
            result = analysis.analyze(parsed, window)
        except (OSError, ValueError) as exc:  # unreadable, not a timeline, or no steady state
            raise typer.BadParameter(str(exc)) from exc
    problems = [str(w.message) for w in caught if issubclass(w.category, reader.TimelineWarning)]
    for problem in problems:
        typer.echo(f"warning: {problem}", err=True)
    if png:
        _timeline_png(parsed, result, png)
    if as_json:
        typer.echo(json.dumps({"file": file, **report.to_dict(result), "warnings": problems}, indent=2))
        return
    for table in report.tables(result):
        console.print(table)
    if png:
        console.print(f"wrote {png}")


def _timeline_png(parsed, result, png: str) -> None:
    try:
        from numba_cuzk.timeline import plot

        plot.gantt(parsed, result, png)
    except ImportError as exc:
        raise typer.BadParameter(f"drawing needs matplotlib (pip install 'numba-cuzk[plot]'): {exc}") from exc
    except OSError as exc:
        raise typer.BadParameter(f"cannot write {png}: {exc}", param_hint="'--png'") from exc


# --- Groth16 on files: circom's .r1cs and .wtns, snarkjs's .zkey and JSON --------------

err_console = Console(stderr=True)  # spinners and warnings, so that stdout stays clean for --json
INSECURE = ("INSECURE setup: this process drew the toxic waste and could forge proofs; use the key for "
            "tests and benchmarks only (real keys come from a ceremony: snarkjs powersoftau, zkey contribute)")


def _spinner(description: str):
    return err_console.status(description)


@app.command()
def setup(
    r1cs: str | None = typer.Option(None, "--r1cs", help="The circuit (circom .r1cs); with --circuit, where to "
                                                         "write the built-in circuit."),
    circuit: str | None = typer.Option(None, "--circuit", help="A built-in circuit instead: mimc, merkle or "
                                                               "bit_heavy."),
    log_constraints: int = typer.Option(10, "--log-constraints", "-k", min=4, max=24,
                                        help="--circuit's size: at most 2^K constraints."),
    witness: str | None = typer.Option(None, "--witness", help="With --circuit: write its witness (.wtns) here."),
    zkey: str = typer.Option(..., "--zkey", help="Write the proving key (snarkjs .zkey) here."),
    vk: str = typer.Option("verification_key.json", "--vk", help="Write the verification key here."),
    cpu: bool = typer.Option(False, "--cpu", help="Use the CPU backend even when a GPU is present."),
) -> None:
    """INSECURE local setup of a circom circuit or a built-in one: a zkey and a verification key.

    For tests and benchmarks: this process draws the toxic waste."""
    from numba_cuzk.circuits import CIRCUITS, build
    from numba_cuzk.groth16.files import setup_files
    from numba_cuzk.groth16.formats import read_r1cs, write_r1cs, write_wtns

    if circuit is None and (r1cs is None or witness is not None):
        raise typer.BadParameter("give --r1cs FILE, or --circuit NAME (which may write --r1cs and --witness)")
    if circuit is not None and circuit not in CIRCUITS:
        raise typer.BadParameter(f"{circuit!r} is not one of {', '.join(CIRCUITS)}", param_hint="'--circuit'")
    typer.echo(f"warning: {INSECURE}", err=True)
    try:
        if circuit is None:
            with _spinner(f"reading {r1cs}"):
                system = read_r1cs(r1cs)
        else:
            with _spinner(f"building {circuit} for 2^{log_constraints}"):
                system, values = build(circuit, log_constraints)
            for path, write, data in ((r1cs, write_r1cs, system), (witness, write_wtns, values)):
                if path:
                    write(path, data)
        ms = setup_files(system, zkey, vk, gpu=False if cpu else None, step=_spinner)
    except (OSError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from exc
    console.print(f"wrote {zkey} and {vk}: {system.n_constraints} constraints, {system.n_wires} wires, "
                  f"{system.n_public} public; setup {ms['setup']:.0f} ms, write {ms['write']:.0f} ms")


@app.command()
def prove(
    zkey: str = typer.Option(..., "--zkey", help="The proving key (snarkjs .zkey)."),
    witness: str = typer.Option(..., "--witness", help="The witness (.wtns, e.g. from snarkjs wtns calculate)."),
    proof: str = typer.Option("proof.json", "--proof", help="Write the proof here (snarkjs's proof.json)."),
    public: str = typer.Option("public.json", "--public", help="Write the public inputs here (public.json)."),
    r1cs: str | None = typer.Option(None, "--r1cs", help="Check the witness against this circuit first; an "
                                                         "error names the first failing constraint."),
    cpu: bool = typer.Option(False, "--cpu", help="Use the CPU backend even when a GPU is present."),
    trusted: bool = typer.Option(False, "--trusted", help="Skip the zkey's point checks (on curve, in subgroup)."),
    as_json: bool = typer.Option(False, "--json", help="Print the times as JSON."),
) -> None:
    """Prove a witness (.wtns) with a zkey; write proof.json and public.json as snarkjs does.

    Prints the time of each step and of the prover's phases."""
    from numba_cuzk.groth16.files import prove_files

    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*under-utilization")  # small circuits, small grids
            result = prove_files(zkey, witness, proof, public, r1cs_path=r1cs, gpu=False if cpu else None,
                                 trusted=trusted, step=_spinner)
    except (OSError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from exc
    total = sum(result.steps_ms.values())
    if as_json:
        rounded = lambda ms: {k: round(v, 3) for k, v in ms.items()}  # noqa: E731
        typer.echo(json.dumps({"proof": proof, "public": public, "backend": result.backend,
                               "total_ms": round(total, 3), "steps_ms": rounded(result.steps_ms),
                               "prove_phases_ms": rounded(result.prove_ms)}, indent=2))
        return
    unit = "device ms" if result.backend == "gpu" else "ms"
    console.print(f"wrote {proof} and {public} ({result.backend} backend)")
    table = Table(title="time by step", caption=f"indented: prove's phases ({unit})")
    table.add_column("step")
    table.add_column("ms", justify="right")
    for name, ms in result.steps_ms.items():
        table.add_row(name, f"{ms:.1f}")
        if name == "prove":
            for phase, phase_ms in result.prove_ms.items():
                table.add_row(f"  [dim]{phase}[/dim]", f"[dim]{phase_ms:.1f}[/dim]")
    table.add_row("[bold]total[/bold]", f"[bold]{total:.1f}[/bold]")
    console.print(table)


@app.command()
def verify(
    vk: str = typer.Option("verification_key.json", "--vk", help="The verification key (snarkjs's JSON)."),
    public: str = typer.Option("public.json", "--public", help="The public inputs."),
    proof: str = typer.Option("proof.json", "--proof", help="The proof."),
    as_json: bool = typer.Option(False, "--json", help="Print the verdict as JSON."),
) -> None:
    """Check a Groth16 proof in snarkjs's files: exit 0 valid, 1 invalid, 2 bad input."""
    from numba_cuzk.groth16.files import verify_files

    try:
        valid = verify_files(vk, public, proof)
    except (OSError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from exc
    if as_json:
        typer.echo(json.dumps({"valid": valid}))
    else:
        console.print("[green]valid[/green]" if valid else "[red]invalid[/red]: the proof does not verify")
    if not valid:
        raise typer.Exit(1)


# --- The proving engine: jobs of partitions, CPU synthesis overlapped with the GPUs -----


@app.command()
def run(
    circuit: str = typer.Option("bit_heavy", "--circuit", help="The partitions' built-in circuit: mimc, merkle or "
                                                                "bit_heavy (each partition another instance)."),
    log_constraints: int = typer.Option(12, "--log-constraints", "-k", min=4, max=26,
                                        help="Partition size: at most 2^K constraints."),
    partitions: int | None = typer.Option(None, "--partitions", "-p", min=1,
                                          help="Partitions per job (default: 10; with --zkey, one per .wtns file)."),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, help="Jobs (proofs of P partitions) to prove."),
    workers: int | None = typer.Option(None, "--workers", "-w", min=1,
                                       help="Synthesis workers (default: the cores but one)."),
    synthesis: str = typer.Option("process", "--synthesis", help="Synthesis workers are processes or threads."),
    gpu_workers: int = typer.Option(2, "--gpu-workers", min=1, help="GPU workers per device, sharing its lock."),
    zkey: str | None = typer.Option(None, "--zkey", help="Prove with this key (snarkjs .zkey), not a circuit."),
    witness_dir: str | None = typer.Option(None, "--witness-dir", help="With --zkey: one .wtns per partition, in "
                                                                       "name order."),
    trusted: bool = typer.Option(False, "--trusted", help="Skip the zkey's point checks (on curve, in subgroup)."),
    out: str | None = typer.Option(None, "--out", help="Write every partition's proof.json and public.json under "
                                                       "OUT/<job>/ as it completes."),
    timeline_file: str | None = typer.Option(None, "--timeline", help="Keep the timeline (JSONL) in this file."),
    cpu: bool = typer.Option(False, "--cpu", help="Use the CPU backend even when a GPU is present."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Prove on the Dask cluster of this scheduler "
                                         "(tcp://HOST:PORT, e.g. from `numba-cuzk cluster local`): one engine "
                                         "per GPU worker, with the settings above."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
) -> None:
    """Prove jobs of partitions with the engine (synthesis on the CPU overlapped with proving
    on every GPU), or on a Dask cluster's GPU workers (--scheduler), verify every proof, and
    show the times and where the GPU's time went.
    Exit 0: all proofs verify; 1: a partition failed or a proof does not verify; 2: bad input."""
    import tempfile
    from dataclasses import replace
    from pathlib import Path

    from numba_cuzk.engine import Engine, EngineConfig
    from numba_cuzk.engine.config import SYNTHESIS_KINDS

    if synthesis not in SYNTHESIS_KINDS:
        raise typer.BadParameter(f"{synthesis!r} is not one of {', '.join(SYNTHESIS_KINDS)}",
                                 param_hint="'--synthesis'")
    pk, work = _run_workload(circuit, log_constraints, partitions, jobs, zkey, witness_dir, trusted, cpu, as_json)
    if scheduler is not None and witness_dir is not None:  # the workers may not share this filesystem
        work = [[read() for read in work[0]]] * jobs
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(timeline_file or Path(scratch) / "timeline.jsonl")
        config = EngineConfig(devices=() if cpu else None, synthesis=synthesis, gpu_workers_per_device=gpu_workers,
                              synthesis_warmup=work[0][0] if callable(work[0][0]) else None,
                              **({"synthesis_workers": workers} if workers else {}))
        if scheduler is not None:
            key = (zkey, trusted) if zkey is not None else (pk, True)
            outcomes, wall_s, devices = _run_cluster(scheduler, config, key, work, out, as_json, path)
        else:
            try:
                engine = Engine(replace(config, timeline_path=path))
            except (OSError, ValueError) as exc:
                raise typer.BadParameter(str(exc)) from exc
            outcomes, wall_s = _run_jobs(engine, pk, work, out, as_json)
            devices = [{"id": d.id, "name": d.name, "gpu": d.gpu} for d in engine.devices]
        summary = _run_summary(pk, outcomes, wall_s, devices)
        summary["utilization"], short = _run_utilization(path)
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
    else:
        _print_run(summary, short)
    if not summary["ok"]:
        raise typer.Exit(1)


def _run_workload(circuit, log_constraints, partitions, jobs, zkey, witness_dir, trusted, cpu, quiet):
    """(proving key, synthesizers per job) from a built-in circuit or --zkey/--witness-dir."""
    from numba_cuzk.engine import workload
    from numba_cuzk.circuits import CIRCUITS

    if (zkey is None) != (witness_dir is None):
        raise typer.BadParameter("--zkey and --witness-dir go together")
    if zkey is not None and partitions is not None:
        raise typer.BadParameter("with --zkey, the partitions are the .wtns files of --witness-dir",
                                 param_hint="'--partitions'")
    if zkey is None and circuit not in CIRCUITS:
        raise typer.BadParameter(f"{circuit!r} is not one of {', '.join(CIRCUITS)}", param_hint="'--circuit'")
    status = Console(stderr=True, quiet=quiet).status
    try:
        if zkey is not None:
            with status(f"reading {zkey}"):
                return workload.file_key(zkey, trusted), [workload.file_partitions(witness_dir)] * jobs
        with status(f"INSECURE local setup of {circuit} at 2^{log_constraints}"):
            pk = workload.circuit_key(circuit, log_constraints, gpu=False if cpu else None)
        return pk, workload.circuit_partitions(circuit, log_constraints, jobs, partitions or 10)
    except (OSError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from exc


def _run_jobs(engine, pk, work, out, quiet):
    """Submit every job, wait with a progress bar per job; ([(name, JobResult or error)], wall s).
    Ctrl-C finishes the partitions in flight, cancels the rest and exits 130."""
    from pathlib import Path

    from rich.progress import Progress

    from numba_cuzk.engine import Job, JobFailed

    start = time.perf_counter()
    with Progress(console=Console(stderr=True), disable=quiet) as progress:
        futures = []
        for j, synthesizers in enumerate(work):
            task = progress.add_task(f"job-{j}", total=len(synthesizers))
            job = Job(pk, synthesizers, name=f"job-{j}", out_dir=Path(out) / f"job-{j}" if out else None,
                      on_proved=lambda _, task=task: progress.advance(task))
            futures.append((job.name, engine.submit(job)))
        try:
            outcomes = []
            for name, future in futures:
                try:
                    outcomes.append((name, future.result()))
                except JobFailed as exc:
                    outcomes.append((name, exc))
        except KeyboardInterrupt:
            typer.echo("interrupted: finishing the partitions in flight", err=True)
            engine.close(cancel=True)
            raise typer.Exit(130)
    wall_s = time.perf_counter() - start
    engine.close()
    return outcomes, wall_s


def _run_summary(pk, outcomes, wall_s: float, devices: list[dict]) -> dict:
    """Every partition re-verified (pairing) and timed; totals per proof (a job). ``devices``:
    id, name, gpu, and on a cluster worker and host."""
    from numba_cuzk.engine import JobFailed
    from numba_cuzk.groth16 import pairing

    jobs = []
    for name, outcome in outcomes:
        failed = isinstance(outcome, JobFailed)
        done = list(outcome.finished.values()) if failed else outcome.partitions
        rows = [{"partition": p.index, "device": p.device, "synthesis_ms": p.synthesis_ms, "kernel_ms": p.kernel_ms,
                 "epilogue_ms": p.epilogue_ms, "total_ms": p.total_ms,
                 "verified": pairing.verify(pk.verifying_key, p.public_inputs, p.proof)} for p in done]
        ok = not failed and all(r["verified"] for r in rows)
        jobs.append({"job": name, "ok": ok, "error": str(outcome) if failed else None, "partitions": rows})
    proved = sum(j["ok"] for j in jobs)
    return {"backend": "gpu" if any(d["gpu"] for d in devices) else "cpu",
            "devices": [{k: v for k, v in d.items() if k != "gpu"} for d in devices],
            "ok": proved == len(jobs), "jobs": jobs, "wall_s": wall_s,
            "s_per_proof": wall_s / proved if proved else None,
            "proofs_per_hour": 3600 * proved / wall_s if proved else 0.0}


def _run_cluster(scheduler: str, config, key, work, out, quiet: bool, timeline_path):
    """Prove ``work`` on the cluster of ``scheduler`` with a progress bar per job: ([(name,
    JobResult or JobFailed)], wall s, devices), the jobs' merged timeline written to
    ``timeline_path``. ``key``: (zkey path, trusted) or (ProvingKey, True)."""
    from pathlib import Path

    from rich.progress import Progress

    try:
        from distributed import Client

        from numba_cuzk.cluster import ClusterProver, zkey_bytes
    except ImportError as exc:
        raise typer.BadParameter(f"a cluster needs dask and distributed (pip install 'numba-cuzk[cluster]'): {exc}",
                                 param_hint="'--scheduler'") from exc
    from numba_cuzk.engine import JobFailed

    source, trusted = key
    data = Path(source).read_bytes() if isinstance(source, str) else zkey_bytes(source)
    try:
        client = Client(scheduler, timeout="20s")
    except (OSError, ValueError) as exc:  # unreachable (TimeoutError is an OSError), or not an address
        raise typer.BadParameter(f"cannot reach the scheduler at {scheduler}: {exc}",
                                 param_hint="'--scheduler'") from exc
    names = [f"job-{j}" for j in range(len(work))]
    with client, ClusterProver(client, config) as prover, Progress(console=Console(stderr=True),
                                                                    disable=quiet) as progress:
        bars = {name: progress.add_task(name, total=len(parts)) for name, parts in zip(names, work)}
        start = time.perf_counter()
        futures = prover.submit_many(data, work, names=names, out_dir=out, trusted=trusted,
                                     on_progress=lambda job, _: progress.advance(bars[job]))
        outcomes = []
        try:
            for name, future in zip(names, futures):
                try:
                    outcomes.append((name, future.result()))
                except JobFailed as exc:
                    outcomes.append((name, exc))
        except KeyboardInterrupt:  # leaving the client cancels the tasks
            typer.echo("interrupted: the cluster's tasks are cancelled", err=True)
            raise typer.Exit(130)
        wall_s = time.perf_counter() - start
        try:
            prover.write_timeline(timeline_path, names)
        except ValueError:  # no partition got as far as an event: no timeline
            pass
        return outcomes, wall_s, prover.devices()


def _run_utilization(path) -> tuple[dict | None, str]:
    """The timeline's figures over its steady state (or the whole run, with fewer than 3
    partitions per device): (report dict, short text)."""
    from numba_cuzk.timeline import analysis, reader, report

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", reader.TimelineWarning)
        try:
            parsed = reader.read(path)
        except OSError as exc:
            return None, f"no utilization figures: {exc}"
    try:
        result = analysis.analyze(parsed, "steady")
    except ValueError:  # fewer than 3 partitions per device: no steady state
        try:
            result = analysis.analyze(parsed, "whole")
        except ValueError as exc:
            return None, f"no utilization figures: {exc}"
    return report.to_dict(result), report.short(result)


def _print_run(summary: dict, short: str) -> None:
    table = Table(title=f"numba-cuzk run ({summary['backend']} backend: "
                        f"{', '.join(d['name'] for d in summary['devices'])})",
                  caption="kernel: the partition's kernels' device time (compiled before the first partition: alloc)")
    for heading in ("job", "part", "dev", "synth ms", "kernel ms", "epi ms", "total ms", "proof"):
        table.add_column(heading, justify="left" if heading in ("job", "proof") else "right")
    for job in summary["jobs"]:
        for r in job["partitions"]:
            table.add_row(job["job"], str(r["partition"]), str(r["device"]), *(f"{r[k]:.1f}" for k in (
                "synthesis_ms", "kernel_ms", "epilogue_ms", "total_ms")),
                "[green]verified[/green]" if r["verified"] else "[red]INVALID[/red]")
    console.print(table)
    for job in summary["jobs"]:
        if job["error"]:
            console.print(f"[red]{job['error']}[/red]")
    rate = "-" if summary["s_per_proof"] is None else f"{summary['s_per_proof']:.2f} s/proof"
    console.print(f"{sum(j['ok'] for j in summary['jobs'])} of {len(summary['jobs'])} proofs in "
                  f"{summary['wall_s']:.2f} s: {rate}, {summary['proofs_per_hour']:.0f} proofs/hour")
    console.print(short)


# --- Dask clusters of GPU workers -----------------------------------------------------------

cluster_app = typer.Typer(help="Dask clusters of GPU workers (needs the cluster extra: dask, distributed).",
                          no_args_is_help=True)
app.add_typer(cluster_app, name="cluster")


@cluster_app.command("local")
def cluster_local(
    gpus: int | None = typer.Option(None, "--gpus", min=1, help="Workers, one per GPU (default: one per visible "
                                                                "GPU; one CPU worker when there is none)."),
    port: int = typer.Option(8786, "--port", min=0, max=65535, help="The scheduler's port (0: any free one)."),
    dashboard: str | None = typer.Option(None, "--dashboard", help="Serve Dask's dashboard here, e.g. :8787."),
) -> None:
    """Start a Dask cluster on this machine, one worker process per GPU, and serve it until
    Ctrl-C. Prove on it with `numba-cuzk run --scheduler ADDRESS`."""
    import threading

    try:
        from numba_cuzk.cluster import local_cluster
    except ImportError as exc:
        raise typer.BadParameter(f"a cluster needs dask and distributed (pip install 'numba-cuzk[cluster]'): "
                                 f"{exc}") from exc
    try:
        cluster = local_cluster(gpus, port=port, dashboard=dashboard)
    except (OSError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from exc
    with cluster:
        console.print(f"scheduler {cluster.scheduler_address}", highlight=False)
        console.print(f"workers {', '.join(cluster.workers)}; prove on them with numba-cuzk run --scheduler "
                      f"{cluster.scheduler_address}; Ctrl-C stops them", highlight=False)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            console.print("stopping the cluster")


if __name__ == "__main__":
    app()
