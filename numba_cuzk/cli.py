"""The ``numba-cuzk`` command line: each command parses its options, calls the package
and prints. Each imports what it needs inside its body, so ``info`` answers without
compiling anything.

Exit codes: 0 success, 1 a check failed (a proof does not verify, a run's proof failed),
2 a user error, 3 a bug, 130 interrupted (Ctrl-C or SIGTERM). One error path, around
every command (``_Commands``): a user error, raised anywhere as ValueError
(fileio.InputError names the file) or OSError, prints one line on stderr, no traceback;
anything else is a bug and prints its traceback, then a line saying so.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import json
import os
import platform
import signal
import sys
import threading
import time
import traceback
import warnings
from importlib import metadata
from typing import Callable, ContextManager, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from numba_cuzk import __version__
from numba_cuzk.commands.plain_options import pass_plain_options
from numba_cuzk.fileio import check_writable, describe_os_error

pass_plain_options()

EXIT_BUG = 3


def _one_error_path(command):
    """``command`` with the CLI's error path: a user error (ValueError, OSError) is one
    line on stderr and exit 2; any other exception a bug: its traceback, a line, exit 3."""

    @functools.wraps(command)
    def checked(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except (OSError, ValueError) as exc:
            message = describe_os_error(exc) if isinstance(exc, OSError) else str(exc)
            typer.echo(f"error: {' '.join(message.split())}", err=True)
            raise typer.Exit(2) from exc
        except Exception as exc:
            if any(cls.__name__ in ("ClickException", "Exit", "Abort") for cls in type(exc).__mro__):
                raise  # typer's own: usage errors, exit codes
            traceback.print_exc()
            typer.echo(f"error: this is a bug in numba-cuzk {__version__} ({type(exc).__name__}), not in your "
                       "input; please report it with the traceback above", err=True)
            raise typer.Exit(EXIT_BUG) from exc
    return checked


class _Commands(typer.Typer):
    """A Typer app whose every command goes through ``_one_error_path``."""

    def command(self, *args, **kwargs):
        register = super().command(*args, **kwargs)
        return lambda command: register(_one_error_path(command))


class _App(_Commands):
    """The top-level app: usage errors print one line ("error: ...") instead of a panel;
    SIGTERM is handled as Ctrl-C (a run drains, exit 130). ``as_process``: called as the
    process's own command line (no arguments given: sys.argv), not from a test's runner."""

    as_process = False

    def __call__(self, *args, **kwargs):
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        self.as_process = not args and not kwargs
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
        code = code if isinstance(code, int) else 0
        if self.as_process and sys.argv[1:2] and sys.argv[1] in QUICK_EXIT:
            _exit(code)
        sys.exit(code)


# Commands whose every output file is written and closed when they return (atomically:
# fileio), so that their process may skip the interpreter's teardown (_exit).
QUICK_EXIT = frozenset({"prove", "verify", "setup"})


def _exit(code: int) -> NoReturn:
    """End the process with ``code`` once a QUICK_EXIT command has returned: atexit's
    callbacks run and the standard streams are flushed, then os._exit. The interpreter's
    own teardown frees numba's and LLVM's objects one by one (device memory through its
    finalizers) for memory the OS takes back whole: 0.3-0.5 s of a 2^14 CPU prove's
    process on the 2-core box. The normal exit where it matters: a thread still working
    (it waits for it), or a profiler, debugger or coverage tool watching (it writes at
    exit)."""
    threads = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if threads or _watched():
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed, or a closed pipe
            stream.flush()
    os._exit(code)


def _watched() -> bool:
    """True under a profiler, tracer or coverage tool (sys.setprofile / settrace, or from
    Python 3.12 a sys.monitoring tool: cProfile is one)."""
    monitoring = getattr(sys, "monitoring", None)
    tools = monitoring is not None and any(monitoring.get_tool(i) for i in range(6))
    return sys.getprofile() is not None or sys.gettrace() is not None or tools


app = _App(
    help="A Groth16 prover for BLS12-381 on Numba CUDA kernels.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="markdown",  # a docstring's paragraphs re-flow to the terminal's width
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
def info(as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
         plan: bool = typer.Option(False, "--plan", help="Print the device-memory plan of a key (--zkey or "
                                   "--circuit/-k) for this GPU's free memory."),
         zkey: str | None = typer.Option(None, "--zkey", help="With --plan: the proving key (snarkjs .zkey)."),
         circuit: str = typer.Option("bit_heavy", "--circuit", help="With --plan: a built-in circuit."),
         log_constraints: int = typer.Option(20, "-k", help="With --plan: the built-in circuit's size, 2^k."),
         slots: int = typer.Option(1, "--slots", help="With --plan: proof slots (the engine: GPU workers + 1)."),
         free_gb: float | None = typer.Option(None, "--free-gb", help="With --plan: plan for this much free device "
                                              "memory (GB) instead of the GPU's."),
         kernels: bool = typer.Option(False, "--kernels", help="Every kernel: the file and line it is made from, its "
                                      "registers, its cache entries and where they came from.")) -> None:
    """Versions, CUDA toolchain, GPUs, the backend kernels will run on, and the kernel
    cache; with --plan, a key's device-memory plan; with --kernels, every kernel."""
    if kernels:
        _print_kernels(as_json)
        return
    if plan:
        from numba_cuzk.groth16 import memory

        try:
            free = memory.free_bytes() if free_gb is None else int(free_gb * 1e9)
            typer.echo(memory.fit_report(_key_shape(zkey, circuit, log_constraints), free, slots, as_json))
        except memory.KeyTooLarge as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1)
        except ValueError as exc:
            raise typer.BadParameter(str(exc))
        return
    from numba_cuzk import backend
    from numba_cuzk.commands import compile as precompile

    report = {
        "numba_cuzk": __version__,
        "python": platform.python_version(),
        **{name.replace("-", "_"): _dist_version(name) for name in ("numba", "numba-cuda", "numpy", "llvmlite")},
        "cuda": backend.describe_toolchain(),
        "gpus": backend.describe_devices(),
        "backend": backend.backend_name(),
        "cpu_code": _cpu_code(),
        "kernel_cache": precompile.cache_report(),
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
    cpu = report["cpu_code"]
    table.add_row("cpu code", f"{cpu['isa']}; Fq products in " + (
        "ADX assembly (mulx, adcx, adox)" if cpu["fq_product"] == "adx" else "LLVM's 64-bit code"))
    cache = report["kernel_cache"]
    table.add_row("kernel cache", f"{cache['folder']} ({cache['bytes'] / 2**20:.1f} MiB, {cache['entries']} entries)")
    if cache.get("prebuilt"):
        table.add_row("  prebuilt", f"{cache['prebuilt']['entries']} entries for {', '.join(cache['prebuilt']['targets'])} "
                      f"(archive sha256 {cache['prebuilt']['sha256'][:16]}...)")
    for target, (have, total) in cache["coverage"].items():
        table.add_row(f"  {target} kernels", f"{have} of {total} cached" + (
            ": `numba-cuzk compile` fills it" if have == 0 else " (the others compile on first use)" * (have < total)))
    console.print(table)


def _cpu_code() -> dict:
    """What the CPU backend's code is compiled for: ``isa``, the CPU its kernels target
    (kernel_cache.cpu_isa; "host" where it is the host's own), and ``fq_product``, the code
    Fq's products run: "adx" (field/adx.py's assembly, where this host has ADX) or "llvm"."""
    from numba_cuzk import kernel_cache
    from numba_cuzk.field import adx

    isa = kernel_cache.cpu_isa()
    return {"isa": isa[0] if isa else "host", "fq_product": "adx" if adx.available() else "llvm"}


def _print_kernels(as_json: bool) -> None:
    """``info --kernels``: a row per kernel (commands/kernel_report.py)."""
    from numba_cuzk import backend, kernel_cache
    from numba_cuzk.commands import kernel_report

    rows = kernel_report.kernel_rows()
    if as_json:
        typer.echo(json.dumps(kernel_report.as_json(rows), indent=2))
        return
    gpus = backend.describe_devices()
    here = "sm_" + gpus[0]["compute_capability"].replace(".", "") if gpus else None
    table = Table(title=f"kernels ({len(rows)}): kernel cache {kernel_cache.cache_dir()}",
                  caption="template: the def the kernel is made from (kernel_cache.specialize binds its free names); "
                          f"registers per thread on {here or 'the first GPU target cached'}")
    for column in ("kernel", "template", "binds", "registers", "cached for", "origin"):  # the names one follows: never cut
        table.add_column(column, justify="right" if column == "registers" else "left",
                         no_wrap=column in ("kernel", "template"))
    for row in rows:
        binds = ", ".join(f"{name} {where.removeprefix('numba_cuzk/')}" for name, where in row.bindings.items())
        table.add_row(row.name, row.source, binds, kernel_report.registers_text(row, here),
                      " ".join(sorted(row.targets)) or "-", row.origin)
    # piped (`| grep accumulate_g2`): a line per kernel, as wide as it needs, not the 80 columns of no terminal
    wide = console.measure(table, options=console.options.update(width=10**4)).maximum
    (console if console.is_terminal else Console(width=wide)).print(table)


def _key_shape(zkey: str | None, circuit: str, log_constraints: int):
    if zkey is not None:
        from numba_cuzk.groth16.formats import read_shape

        return read_shape(zkey)
    from numba_cuzk.circuits.builtin import key_shape

    return key_shape(circuit, log_constraints)


@app.command("compile")
def compile_kernels(processes: int = typer.Option(None, "--processes", "-j", min=1,
                                                  help="Worker processes (default: one per task)."),
                    targets: str | None = typer.Option(None, "--targets", help="Build for these targets instead of "
                                                       "this machine, no GPU needed: comma-separated cpu, sm_80, "
                                                       "sm_86, sm_89, sm_90, sm_100, sm_120, or 'all'. Needs "
                                                       "--archive."),
                    archive: str | None = typer.Option(None, "--archive", help="With --targets: write the kernels "
                                                       "as this archive (.tar.gz) for --fetch."),
                    fetch: str | None = typer.Option(None, "--fetch", help="Install prebuilt kernels from this "
                                                     "archive (a path or a file:/https: URL) into the kernel cache."),
                    sha256: str | None = typer.Option(None, "--sha256", help="With --fetch: the archive's expected "
                                                      "SHA-256 (as --archive printed it); refused if it differs.")) -> None:
    """Compile every kernel for the visible GPU and the CPU backend into the kernel cache,
    in parallel processes; later processes load them instead of compiling. With --targets
    and --archive, build prebuilt kernels for other machines; with --fetch, install them."""
    if fetch is not None:
        if targets or archive:
            raise typer.BadParameter("--fetch installs an archive: it takes no --targets or --archive")
        _fetch_kernels(fetch, sha256)
        return
    if (targets is None) != (archive is None):
        raise typer.BadParameter("--targets and --archive go together (build prebuilt kernels)")
    if targets is not None:
        from numba_cuzk.commands.ahead import TARGETS

        chosen = ["cpu", *TARGETS] if targets == "all" else [t.strip() for t in targets.split(",") if t.strip()]
        _build_kernels(chosen, archive, processes)
        return
    from numba_cuzk import kernel_cache
    from numba_cuzk.commands import compile as precompile
    from numba_cuzk.commands import progress

    names = precompile.task_names()
    start = time.perf_counter()
    with progress.steps("compiling kernels", len(names), sys.stdout) as advance:
        precompile.compile_all(processes=processes, on_done=lambda r: advance(
            f"{r.name:<14} {r.seconds:6.1f} s  ({r.compiled} compiled, {r.loaded} from the cache; "
            f"CPU {r.cpu_seconds:.1f} s)"))
    console.print(f"kernel cache {kernel_cache.cache_dir()}: {len(names)} tasks in "
                  f"{time.perf_counter() - start:.1f} s")


def _build_kernels(targets: list[str], archive: str, processes: int | None) -> None:
    from pathlib import Path

    from numba_cuzk.commands import prebuilt, progress

    start = time.perf_counter()
    bars = []

    def stage(name: str, count: int) -> None:
        if bars:
            bars.pop().__exit__(None, None, None)
        typer.echo(f"{name} ({time.perf_counter() - start:.0f} s)", err=True)
        if count:
            bars.append(progress.Steps(name, count, sys.stderr).__enter__())

    def done(result) -> None:
        bars[-1].advance(f"{result.name:<24} {result.seconds:6.1f} s ({result.compiled} compiled)")

    digest = prebuilt.build(targets, Path(archive), processes=processes, on_stage=stage, on_done=done)
    if bars:
        bars.pop().__exit__(None, None, None)
    size = Path(archive).stat().st_size
    typer.echo(f"wrote {archive} ({size / 2**20:.1f} MiB, {', '.join(targets)}) in "
               f"{time.perf_counter() - start:.0f} s\nsha256 {digest}")
    typer.echo(f"install: numba-cuzk compile --fetch {archive} --sha256 {digest}")  # one line, to copy


def _fetch_kernels(source: str, sha256: str | None) -> None:
    import tempfile
    from pathlib import Path

    from numba_cuzk import kernel_cache
    from numba_cuzk.commands import prebuilt

    with tempfile.TemporaryDirectory() as tmp:
        archive = prebuilt.fetch(source, Path(tmp) / "kernels.tar.gz")
        result = prebuilt.install(archive, sha256)
    checked = "checked against --sha256" if sha256 else "not checked: pass --sha256 to check it"
    console.print(f"installed {result['installed']} kernel entries ({result['kept']} already there) for "
                  f"{', '.join(result['targets'])} into {kernel_cache.cache_dir()}\n"
                  f"archive sha256 {result['sha256']} ({checked}); each file matched its manifest")


def _compile_first(cpu: bool) -> None:
    """Before a command that proves: on a GPU machine's first run of this version of the
    code, every GPU kernel compiled in parallel processes first (first_run.compile_gpu_first);
    then any kernel the command compiles is announced, with a progress line each."""
    from numba_cuzk.commands import first_run

    if not cpu:
        first_run.compile_gpu_first()
    first_run.announce_compiles_until_exit()


@app.command()
def selfcheck(
    count: int = typer.Option(1000, "--count", "-n", min=0, help="Random elements per field, besides the edge values."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random elements."),
) -> None:
    """Check the field kernels against Python integers: on the CPU, and on the GPU if one is present."""
    from numba_cuzk import backend
    from numba_cuzk.field.selfcheck import check_fields

    targets = ["cpu", "gpu"] if backend.cuda_available() else ["cpu"]
    console.print(f"backend: [bold]{backend.backend_name()}[/bold]; checking on {' and '.join(targets)}")
    results = check_fields(count, seed, targets)

    table = Table(title="numba-cuzk selfcheck", caption="1st ms includes loading the kernels (compiling them, the first time on a machine)")
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
    proofs: int = typer.Option(2, "--proofs", min=1, help="Proofs to make (the first loads the kernels from the cache)."),
    cpu: bool = typer.Option(False, "--cpu", help="Use the CPU backend even when a GPU is present."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Build a circuit, set it up (insecure, local), prove, verify, and show where the time went."""
    from dataclasses import asdict

    from numba_cuzk.circuits.demo import run_demo

    _circuit_name(circuit)
    gpu = False if cpu else None
    _compile_first(cpu)
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
    table = Table(title="time by phase", caption="proof 1 includes loading the kernels (compiling them, the first time on a machine); epilogue is host time")
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
    """Honest GPU utilization from a timeline: host brackets vs device-busy, the utilization
    stack (down to SM activity, pipes and useful work, with --trace counters), idle time by
    cause, kernel efficiency, synthesis/GPU balance."""
    from numba_cuzk.fileio import check_readable
    from numba_cuzk.timeline import analysis, reader, report

    if window not in analysis.WINDOWS:
        raise typer.BadParameter(f"{window!r} is not one of {', '.join(analysis.WINDOWS)}", param_hint="'--window'")
    check_readable(file, "timeline")
    if png:
        check_writable(png)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", reader.TimelineWarning)
        parsed = reader.read(file)
        result = analysis.analyze(parsed, window)
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
    except ImportError as exc:
        raise typer.BadParameter(f"drawing needs matplotlib (pip install 'numba-cuzk[plot]'): {exc}") from exc
    plot.gantt(parsed, result, png)


# --- Groth16 on files: circom's .r1cs and .wtns, snarkjs's .zkey and JSON --------------

err_console = Console(stderr=True)  # spinners and warnings, so that stdout stays clean for --json
INSECURE = ("INSECURE setup: this process drew the toxic waste and could forge proofs; use the key for "
            "tests and benchmarks only (real keys come from a ceremony: snarkjs powersoftau, zkey contribute)")
CLUSTER_EXTRA = "a cluster needs dask and distributed (pip install 'numba-cuzk[cluster]')"


def _spinner(description: str):
    """A spinner on a terminal; elsewhere (a log, a pipe, a benchmark) nothing: rich's
    status draws nothing there but still runs a refresh thread per step, and that
    thread's waits are what Python 3.12's cProfile (sys.monitoring, every thread) books
    to the step's exit: 1.37 s of a 2^14 profile that cost ~1 ms of wall time."""
    return err_console.status(description) if err_console.is_terminal else contextlib.nullcontext()


def _collector_after_imports(step: Callable[[str], ContextManager]) -> Callable[[str], ContextManager]:
    """``step``, with Python's garbage collector off from now until its first call, then the
    objects made so far frozen (gc.freeze) and the collector on. Before a prove's first step
    the process imports numba (and numba.cuda) and the kernels' modules, ~1000 modules whose
    objects live as long as the process, and each full collection walked them all: 25-62
    ms of pauses in a 2^14 one-shot on the 2-core box, 5 ms after. A one-shot GPU prove's
    process on the H200 took 196 ms less (bench/NOTES.md, 2026-12-05). Later collections see
    only the proof's objects; a kernel compiled in the steps compiles with the collector on."""
    gc.disable()

    def first_on(description: str) -> ContextManager:
        if not gc.isenabled():
            gc.freeze()
            gc.enable()
        return step(description)

    return first_on


def _circuit_name(circuit: str) -> None:
    from numba_cuzk.circuits import CIRCUITS

    if circuit not in CIRCUITS:
        raise typer.BadParameter(f"{circuit!r} is not one of {', '.join(CIRCUITS)}", param_hint="'--circuit'")


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
    force: bool = typer.Option(False, "--force", help="Replace an existing --zkey or --vk."),
    cpu: bool = typer.Option(False, "--cpu", help="Use the CPU backend even when a GPU is present."),
) -> None:
    """INSECURE local setup of a circom circuit or a built-in one: a zkey and a verification key.

    For tests and benchmarks: this process draws the toxic waste. An existing key is
    never replaced without --force."""
    from numba_cuzk.circuits import build
    from numba_cuzk.fileio import check_readable, naming
    from numba_cuzk.groth16.files import check_setup_paths, setup_files
    from numba_cuzk.groth16.formats import read_r1cs, write_r1cs, write_wtns

    if circuit is None and (r1cs is None or witness is not None):
        raise typer.BadParameter("give --r1cs FILE, or --circuit NAME (which may write --r1cs and --witness)")
    if circuit is None:
        check_readable(r1cs, "circuit file")
    else:
        _circuit_name(circuit)
        for path in (r1cs, witness):
            if path:
                check_writable(path)
    check_setup_paths(zkey, vk, replace=force)
    typer.echo(f"warning: {INSECURE}", err=True)
    if circuit is None:
        with _spinner(f"reading {r1cs}"), naming(r1cs):
            system = read_r1cs(r1cs)
    else:
        with _spinner(f"building {circuit} for 2^{log_constraints}"):
            system, values = build(circuit, log_constraints)
        for path, write, data in ((r1cs, write_r1cs, system), (witness, write_wtns, values)):
            if path:
                write(path, data)
    ms = setup_files(system, zkey, vk, gpu=False if cpu else None, replace=force, step=_spinner)
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
    recheck: bool = typer.Option(False, "--recheck", help="Check the zkey's points even if this machine checked "
                                                          "the same bytes before (a record in the user's cache)."),
    as_json: bool = typer.Option(False, "--json", help="Print the times as JSON."),
    server: str | None = typer.Option(None, "--server", help="Prove on the daemon at this address (unix:PATH or "
                                      "HOST:PORT; `numba-cuzk serve`) instead of in this process."),
    token_file: str | None = typer.Option(None, "--token-file", help="With --server: the daemon's token."),
    priority: str = typer.Option("normal", "--priority", help="With --server: critical, high, normal or low."),
) -> None:
    """Prove a witness (.wtns) with a zkey; write proof.json and public.json as snarkjs does.

    Prints the time of each step and of the prover's phases. With --server, the daemon
    proves (the key stays resident there) and this process only sends and writes."""
    if server is not None:
        from numba_cuzk.serve import client_cli

        argv = ["prove", "--server", server, "--zkey", zkey, "--witness", witness, "--proof", proof, "--public",
                public, "--priority", priority] + ["--token-file", token_file] * bool(token_file) + ["--json"] * as_json
        raise typer.Exit(client_cli.main(argv))
    step = _collector_after_imports(_spinner) if app.as_process else _spinner
    if not cpu and app.as_process:  # its context made while numba imports (primary_context.py)
        from numba_cuzk import primary_context

        primary_context.retain_in_background()
    from numba_cuzk.groth16.key_checks import digest_in_background

    digest = None if trusted else digest_in_background(zkey)  # hashed while numba imports
    from numba_cuzk.groth16.files import prove_files

    _compile_first(cpu)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*under-utilization")  # small circuits, small grids
        result = prove_files(zkey, witness, proof, public, r1cs_path=r1cs, gpu=False if cpu else None,
                             trusted=trusted, recheck=recheck, zkey_digest=digest, step=step)
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

    valid = verify_files(vk, public, proof)
    if as_json:
        typer.echo(json.dumps({"valid": valid}))
    else:
        console.print("[green]valid[/green]" if valid else "[red]invalid[/red]: the proof does not verify")
    if not valid:
        raise typer.Exit(1)


# --- The proving daemon: keys resident, proofs over gRPC (numba_cuzk.serve) -----------


@app.command()
def serve(
    listen: str | None = typer.Option(None, "--listen", help="unix:PATH (default: the user's runtime directory) or "
                                      "HOST:PORT; a non-loopback address needs --token-file."),
    preload: list[str] = typer.Option([], "--preload", help="Load, check and make hot this zkey before accepting "
                                      "calls (repeatable)."),
    token_file: str | None = typer.Option(None, "--token-file", help="Every call must carry the token in this file."),
    metrics_port: int | None = typer.Option(None, "--metrics-port", min=1, max=65535,
                                            help="Also serve Prometheus metrics over HTTP on this port."),
    max_running: int | None = typer.Option(None, "--max-running", min=1, help="Jobs in the engine at once (the rest "
                                           "queue by priority; default: its proof slots, 3 per device)."),
    timeline_file: str | None = typer.Option(None, "--timeline", help="Write the timeline here (default: beside "
                                             "the socket); `numba-cuzk timeline` reads it while it grows."),
    host_budget_gb: float | None = typer.Option(None, "--host-budget-gb", help="Host memory for resident keys "
                                                "(default: a quarter of physical memory)."),
    cpu: bool = typer.Option(False, "--cpu", help="Use the CPU backend even when a GPU is present."),
    recheck: bool = typer.Option(False, "--recheck", help="Check each zkey's points when it is loaded even if this "
                                 "machine checked the same bytes before (a record in the user's cache)."),
) -> None:
    """Run the proving daemon in the foreground (gRPC): proving keys stay resident, clients
    prove with `numba-cuzk prove --server` or numba_cuzk.serve.client.ProverClient.
    SIGTERM or Ctrl-C drains: running jobs finish, queued ones are answered UNAVAILABLE."""
    from numba_cuzk.serve.server import ServeConfig
    from numba_cuzk.serve.server import serve as run_daemon

    for path in preload:
        from numba_cuzk.fileio import check_readable

        check_readable(path, "zkey")
    if timeline_file:
        check_writable(timeline_file)
    _compile_first(cpu)
    config = ServeConfig(listen=listen, preload=tuple(preload), token_file=token_file, metrics_port=metrics_port,
                         cpu=cpu, max_running=max_running, timeline=timeline_file, recheck=recheck,
                         host_budget_bytes=None if host_budget_gb is None else int(host_budget_gb * 1e9))
    refused = run_daemon(config, ready=lambda line: print(line, flush=True))
    typer.echo(f"stopped{f': {refused} queued jobs answered unavailable' if refused else ''}", err=True)


@app.command()
def status(
    server: str | None = typer.Option(None, "--server", help="The daemon (default: $NUMBA_CUZK_SERVER or the "
                                      "user's socket)."),
    token_file: str | None = typer.Option(None, "--token-file", help="The daemon's token."),
    as_json: bool = typer.Option(False, "--json", help="Print the status as JSON."),
) -> None:
    """The daemon's status: queues, jobs, keys and their tiers, devices. Exit 0 while it
    answers, 2 when it does not."""
    from numba_cuzk.serve import client_cli

    argv = ["status"] + ["--server", server] * bool(server) + ["--token-file", token_file] * bool(token_file)
    raise typer.Exit(client_cli.main(argv + ["--json"] * as_json))


# --- The proving engine: jobs of partitions, CPU synthesis overlapped with the GPUs -----


@app.command()
def run(
    circuit: str = typer.Option("bit_heavy", "--circuit", help="The partitions' built-in circuit: mimc, merkle or "
                                                                "bit_heavy (each partition another instance)."),
    log_constraints: int = typer.Option(12, "--log-constraints", "-k", min=4, max=26,
                                        help="Partition size: at most 2^K constraints."),
    partitions: int | None = typer.Option(None, "--partitions", "-p", min=1,
                                          help="Partitions per job (default: 10; not with --zkey)."),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, help="Jobs (proofs of P partitions) to prove."),
    workers: int | None = typer.Option(None, "--workers", "-w", min=1,
                                       help="Synthesis workers (default: the cores but one)."),
    synthesis: str = typer.Option("process", "--synthesis", help="Synthesis workers are processes or threads."),
    gpu_workers: int = typer.Option(2, "--gpu-workers", min=1, help="GPU workers per device, sharing its lock."),
    zkey: str | None = typer.Option(None, "--zkey", help="Prove with this key (snarkjs .zkey), not a circuit."),
    witness_dir: str | None = typer.Option(None, "--witness-dir", help="With --zkey: each .wtns file here is a "
                                                                       "proof (a job) of its own."),
    trusted: bool = typer.Option(False, "--trusted", help="Skip the zkey's point checks (on curve, in subgroup)."),
    out: str | None = typer.Option(None, "--out", help="Write every partition's proof.json and public.json under "
                                                       "OUT/<job>/ as it completes; a rerun proves only the rest."),
    plain: bool = typer.Option(False, "--plain", help="Plain MSMs for a bit-heavy circuit's witness, not the "
                                                      "bit/tail split (sums of the 1s' bases, Pippenger for the rest)."),
    timeline_file: str | None = typer.Option(None, "--timeline", help="Keep the timeline (JSONL) in this file."),
    trace: str | None = typer.Option(None, "--trace", help="'kernels': record every kernel and copy the GPUs run "
                                                           "(CUPTI, cupti-python) in the timeline; 'counters': the "
                                                           "GPUs' hardware counters (NVML GPM) every 100 ms; "
                                                           "'kernels,counters': both."),
    cpu: bool = typer.Option(False, "--cpu", help="Use the CPU backend even when a GPU is present."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Prove on the Dask cluster of this scheduler "
                                         "(tcp://HOST:PORT, e.g. from `numba-cuzk cluster local`): one engine "
                                         "per GPU worker, with the settings above."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
) -> None:
    """Prove jobs of partitions with the engine (synthesis on the CPU overlapped with proving
    on every GPU), or on a Dask cluster's GPU workers (--scheduler), verify every proof, and
    show the times and where the GPU's time went.

    Exit 0: all proofs verify; 1: a proof failed or does not verify; 2: bad input."""
    import contextlib
    import tempfile
    from pathlib import Path

    from numba_cuzk.circuits.builtin import split_tail
    from numba_cuzk.engine import EngineConfig
    from numba_cuzk.commands.batch import check_out, resident_slots
    from numba_cuzk.engine.config import SYNTHESIS_KINDS, trace_kinds
    from numba_cuzk.engine.workload import circuit_warmup

    if synthesis not in SYNTHESIS_KINDS:
        raise typer.BadParameter(f"{synthesis!r} is not one of {', '.join(SYNTHESIS_KINDS)}",
                                 param_hint="'--synthesis'")
    try:
        trace_kinds(trace)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--trace'") from None
    _check_run_sources(circuit, partitions, jobs, zkey, witness_dir)
    check_out(out)
    if timeline_file:
        check_writable(timeline_file)
    if scheduler is None:
        _compile_first(cpu)
    with contextlib.ExitStack() as stack:
        client = stack.enter_context(_connect(scheduler)) if scheduler is not None else None
        config = EngineConfig(devices=() if cpu else None, synthesis=synthesis, gpu_workers_per_device=gpu_workers,
                              trace=trace, synthesis_warmup=None if zkey else circuit_warmup(circuit),
                              tail=None if zkey or plain else split_tail(circuit),
                              **({"synthesis_workers": workers} if workers else {}))
        plan, pk = _run_plan(circuit, log_constraints, partitions, jobs, zkey, witness_dir, trusted, cpu, as_json,
                             None if client is not None else resident_slots(config), config.tail)
        path = Path(timeline_file or Path(stack.enter_context(tempfile.TemporaryDirectory())) / "timeline.jsonl")
        summary, short = _run_jobs(config, client, pk, plan, zkey, trusted, out, as_json, path)
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
    else:
        _print_run(summary, short)
    if not summary["ok"]:
        raise typer.Exit(1)


def _check_run_sources(circuit, partitions, jobs, zkey, witness_dir) -> None:
    if (zkey is None) != (witness_dir is None):
        raise typer.BadParameter("--zkey and --witness-dir go together")
    if zkey is not None and partitions is not None:
        raise typer.BadParameter("with --zkey, each .wtns file of --witness-dir is a proof", param_hint="'--partitions'")
    if zkey is not None and jobs != 1:
        raise typer.BadParameter("with --zkey, each .wtns file of --witness-dir is a job", param_hint="'--jobs'")
    if zkey is None:
        _circuit_name(circuit)


def _connect(scheduler: str):
    try:
        from numba_cuzk.cluster.batch import connect
    except ImportError as exc:
        raise typer.BadParameter(f"{CLUSTER_EXTRA}: {exc}", param_hint="'--scheduler'") from exc
    with _spinner(f"reaching the scheduler at {scheduler}"):
        return connect(scheduler)


def _run_plan(circuit, log_constraints, partitions, jobs, zkey, witness_dir, trusted, cpu, quiet, slots, tail):
    """(commands.batch.Plan, its proving key; None when every witness was refused); a
    circuit's key left on the GPU for ``slots`` proof slots (and ``tail``: the engine's
    bit/tail split) when that is not None."""
    from numba_cuzk.commands import batch

    status = Console(stderr=True, quiet=quiet).status
    if zkey is not None:
        plan = batch.witness_jobs(zkey, witness_dir, trusted)
        if not plan.jobs:
            return plan, None
        with status(f"reading {zkey}" + ("" if trusted else " and checking its points")):
            return plan, plan.key()
    plan = batch.circuit_jobs(circuit, log_constraints, jobs, partitions or 10, gpu=False if cpu else None,
                              resident_slots=slots, tail=tail)
    where = "" if slots is None else ", left on the GPU"
    with status(f"INSECURE local setup of {circuit} at 2^{log_constraints}{where}"):
        return plan, plan.key()


def _run_jobs(config, client, pk, plan, zkey, trusted, out, quiet, path) -> tuple[dict, str]:
    """Prove ``plan`` on this machine's engine or on ``client``'s cluster, with a progress
    bar per job: the summary (commands.batch.summarize, with the timeline's utilization)
    and the utilization in short."""
    from dataclasses import replace

    from rich.progress import Progress

    from numba_cuzk.engine import Engine
    from numba_cuzk.commands.batch import prove_local, summarize
    from numba_cuzk.timeline.summary import utilization

    with Progress(console=Console(stderr=True), disable=quiet) as progress:
        bars = {job.name: progress.add_task(job.name, total=len(job.partitions)) for job in plan.jobs}
        advance = lambda name: progress.advance(bars[name])  # noqa: E731
        if pk is None:
            outcomes, wall_s, devices = [(name, error, {}) for name, error in plan.rejected.items()], 0.0, []
        elif client is not None:
            from numba_cuzk.cluster.batch import prove_cluster

            try:
                outcomes, wall_s, devices = prove_cluster(client, config, pk, plan, zkey=zkey, trusted=trusted,
                                                          out=out, on_proved=advance, timeline_path=path)
            except KeyboardInterrupt:  # leaving the client cancels the tasks
                typer.echo("interrupted: the cluster's tasks are cancelled", err=True)
                raise typer.Exit(130)
        else:
            engine = Engine(replace(config, timeline_path=path))
            try:
                outcomes, wall_s = prove_local(engine, pk, plan, out, on_proved=advance)
            except KeyboardInterrupt:
                typer.echo("interrupted: finishing the partitions in flight", err=True)
                engine.close(cancel=True)
                raise typer.Exit(130)
            devices = [{"id": d.id, "name": d.name, "gpu": d.gpu} for d in engine.devices]
    summary = summarize(pk, plan, outcomes, wall_s, devices)
    summary["utilization"], short = utilization(path) if pk is not None else (None, "")
    return summary, short


def _print_run(summary: dict, short: str) -> None:
    # a device's name says its backend ("NVIDIA H200", "cpu x2 (CPU backend)"): named once
    table = Table(title=f"numba-cuzk run on {', '.join(d['name'] for d in summary['devices']) or 'nothing'}",
                  caption="kernel: the partition's kernels' device time (compiled before the first partition: alloc)")
    for heading in ("job", "part", "dev", "synth ms", "kernel ms", "epi ms", "total ms", "proof"):
        table.add_column(heading, justify="left" if heading in ("job", "proof") else "right")
    for job in summary["jobs"]:
        for r in job["partitions"]:
            verdict = "[green]verified[/green]" if r["verified"] else "[red]INVALID[/red]"
            times = ["-"] * 4 if r["resumed"] else [f"{r[k]:.1f}" for k in (
                "synthesis_ms", "kernel_ms", "epilogue_ms", "total_ms")]
            table.add_row(job["job"], str(r["partition"]), "-" if r["resumed"] else str(r["device"]), *times,
                          verdict + (" (kept from an earlier run)" if r["resumed"] else ""))
    console.print(table)
    for failure in summary["failures"]:
        console.print(f"[red]failed[/red] {failure['job']}: {failure['error']}", highlight=False)
    rate = "-" if summary["s_per_proof"] is None else f"{summary['s_per_proof']:.2f} s/proof"
    resumed = f" ({summary['resumed']} kept from an earlier run)" if summary["resumed"] else ""
    console.print(f"{summary['proofs']} of {summary['partitions']} proofs in {len(summary['jobs'])} jobs{resumed}, "
                  f"{summary['wall_s']:.2f} s: {rate}, {summary['proofs_per_hour']:.0f} proofs/hour")
    if summary["backend"] == "cpu":
        console.print("cpu backend: the kernels ran on the CPU, so there is no GPU utilization to show")
    elif short:
        console.print(short)


# --- Dask clusters of GPU workers -----------------------------------------------------------

cluster_app = _Commands(help="Dask clusters of GPU workers (needs the cluster extra: dask, distributed).",
                          no_args_is_help=True, rich_markup_mode="markdown")
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
        raise typer.BadParameter(f"{CLUSTER_EXTRA}: {exc}") from exc
    with local_cluster(gpus, port=port, dashboard=dashboard) as cluster:
        console.print(f"scheduler {cluster.scheduler_address}", highlight=False)
        console.print(f"workers {', '.join(cluster.workers)}; prove on them with numba-cuzk run --scheduler "
                      f"{cluster.scheduler_address}; Ctrl-C stops them", highlight=False)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            console.print("stopping the cluster")


if __name__ == "__main__":
    app()
