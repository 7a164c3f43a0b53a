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

    from numba_cuzk.groth16.circuits import CIRCUITS
    from numba_cuzk.groth16.demo import run_demo

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


if __name__ == "__main__":
    app()
