"""The daemon: a gRPC Prover service over the Engine, keys resident (numba_cuzk.serve).

    serve(ServeConfig(listen="unix:/tmp/p.sock", preload=["c.zkey"]), ready=print)

Each call is checked before it queues anything, and a refusal is a gRPC status whose
details name the problem (the daemon goes on serving):

    INVALID_ARGUMENT     a request that is not its call's message (serve/wire.py decodes it);
                         a witness that is not a .wtns file, has the wrong number of wires,
                         holds a value >= r, or does not prove with the key (wrong circuit);
                         a zkey path that cannot be read or does not parse or check
    NOT_FOUND            an unknown key id or job id
    FAILED_PRECONDITION  evicting a key in use; a key refused after its check failed
    UNAUTHENTICATED      a wrong or missing token (TCP with --token-file)
    UNAVAILABLE          the daemon is shutting down (queued jobs are answered so)
    DEADLINE_EXCEEDED    AwaitProof's timeout passed (the job goes on)
    INTERNAL             anything else (a bug: its type and message)
"""

from __future__ import annotations

import hmac
import json
import os
import signal
import socket
import stat
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path

import grpc

from numba_cuzk import __version__
from numba_cuzk.engine import Engine, EngineConfig
from numba_cuzk.engine.config import physical_memory_bytes
from numba_cuzk.groth16.formats import read_shape, read_wtns
from numba_cuzk.groth16.memory import free_bytes, used_bytes
from numba_cuzk.serve import protocol, wire
from numba_cuzk.serve.jobs import Answer, Refused, Scheduler, ServedJob, WitnessRejected
from numba_cuzk.serve.keys import KeyInUse, KeyStore, UnknownKey
from numba_cuzk.serve.metrics import Metrics

PRIORITY_NAMES = {value: name for name, value in protocol.PRIORITY_VALUES.items()}
DEVICE_BUDGET_SHARE = 0.9  # of the device memory free at start, for resident keys (the rest: other processes)
DRAIN_GRACE_S = 5.0


@dataclass(frozen=True)
class ServeConfig:
    """The daemon's settings (`numba-cuzk serve --help`). ``listen``: protocol.parse_address.
    ``max_running``: jobs in the engine at once (None: the engine's proof slots, gpu workers
    + 1 per device, so a job is staged into the third slot while one proves and the next
    waits queued behind it on the device). ``host_budget_bytes``: warm keys' host
    memory (None: a quarter of physical memory). ``device_budget_bytes``: resident keys'
    bytes per device (None: 90% of the memory free at start; no limit on the CPU backend).
    ``recheck``: check every key's points when it is loaded, even a key whose bytes passed
    before on this machine (groth16/key_checks.py)."""

    listen: str | None = None
    preload: tuple[str, ...] = ()
    token_file: str | None = None
    metrics_port: int | None = None
    cpu: bool = False
    max_running: int | None = None
    timeline: str | None = None
    host_budget_bytes: int | None = None
    device_budget_bytes: int | None = None
    workers: int = 32  # gRPC threads: each waiting Prove call holds one
    recheck: bool = False  # check keys' points even where this machine's key-check records say they passed


class CallError(Exception):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code, self.details = code, " ".join(details.split())


def _status_of(exc: BaseException) -> CallError:
    if isinstance(exc, CallError):
        return exc
    if isinstance(exc, UnknownKey):
        return CallError(grpc.StatusCode.NOT_FOUND, str(exc))
    if isinstance(exc, KeyInUse):
        return CallError(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
    if isinstance(exc, Refused):
        return CallError(grpc.StatusCode.UNAVAILABLE, str(exc))
    if isinstance(exc, (ValueError, WitnessRejected, OSError)):
        return CallError(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
    return CallError(grpc.StatusCode.INTERNAL, f"{type(exc).__name__}: {exc}")


def witness_from_bytes(data: bytes, n_vars: int):
    """A .wtns file's bytes -> (8, n) uint32 witness, checked (format, canonical values,
    ``n_vars`` wires), parsed where they lie (no spool file). ValueError naming the problem."""
    if not data:
        raise ValueError("witness: empty (expected a .wtns file's bytes)")
    try:
        witness = read_wtns(data)
    except ValueError as exc:
        raise ValueError(f"witness: {exc}") from None
    if witness.shape[1] != n_vars:
        raise ValueError(f"witness: {witness.shape[1]} wires, the key expects {n_vars}")
    return witness


class ProverService:
    """The gRPC calls (proving.proto) over a KeyStore and a Scheduler. Each method takes a
    request decoded by serve/wire.py (bytes fields are views of the request: a witness is not
    copied before its parse) and returns its reply's fields, which ``handler`` encodes; an
    exception, the request's own decoding included, becomes a status naming the problem."""

    def __init__(self, daemon: Daemon) -> None:
        self.d = daemon

    def handler(self) -> grpc.GenericRpcHandler:
        """The service's calls on raw bytes (wire.METHODS), for grpc.Server."""
        return grpc.method_handlers_generic_handler(wire.SERVICE, {
            method: grpc.unary_unary_rpc_method_handler(
                lambda data, context, method=method: self._call(method, data, context))
            for method in wire.METHODS})

    def _call(self, method: str, data: bytes, context) -> bytes:
        request, reply = wire.METHODS[method]
        try:
            try:
                decoded = wire.decode(request, data, copy=False)
            except ValueError as exc:
                raise ValueError(f"a malformed {request} message: {exc}") from None
            return wire.encode(reply, getattr(self, method)(decoded, context))
        except Exception as exc:
            error = _status_of(exc)
            context.abort(error.code, error.details)

    def _key(self, ref):
        if not ref.key_id and not ref.zkey_path:
            raise ValueError("key: give key_id or zkey_path")
        return self.d.keys.resolve(ref.key_id, ref.zkey_path)

    def _queue(self, request, retain: bool) -> ServedJob:
        received = time.monotonic_ns()
        if request.priority not in PRIORITY_NAMES:
            raise ValueError(f"priority {request.priority}: not one of {sorted(PRIORITY_NAMES)}")
        if request.partitions and request.witness:
            raise ValueError("give witness or partitions, not both")
        entry = self._key(request.key)
        n_vars = self.d.n_vars(entry)
        if request.partitions:
            witnesses = []
            for index, data in enumerate(request.partitions):
                try:
                    witnesses.append(witness_from_bytes(data, n_vars))
                except ValueError as exc:
                    raise ValueError(f"partition {index}: {exc}") from None
        else:
            witnesses = [witness_from_bytes(request.witness, n_vars)]
        self.d.keys.acquire(entry)
        job = self.d.scheduler.submit(entry, witnesses, PRIORITY_NAMES[request.priority], retain, received)
        self.d.step(job, "witness", received, job.queued_ns)
        return job

    def _reply(self, job: ServedJob, answer: Answer) -> dict:
        """The ProveReply to send, its ``reply`` step recorded (from the answer made to here:
        the wake-up of the call's thread)."""
        self.d.step(job, "reply", answer.answered_ns, time.monotonic_ns())
        return {"job_id": job.id, "key_id": job.key.key_id, "proof_json": answer.proof_json,
                "public_json": answer.public_json, "queued_ms": answer.queued_ms, "prove_ms": answer.prove_ms,
                "partitions": [{"proof_json": p, "public_json": q} for p, q in answer.texts]}

    def Prove(self, request, context):
        job = self._queue(request, retain=False)
        context.add_callback(lambda: self.d.scheduler.abandon(job) if not job.future.done() else None)
        return self._reply(job, job.future.result())

    def SubmitProof(self, request, context):
        job = self._queue(request, retain=True)
        return {"job_id": job.id, "key_id": job.key.key_id}

    def _job(self, job_id: str) -> ServedJob:
        job = self.d.scheduler.jobs.get(job_id)
        if job is None:
            raise UnknownKey(f"unknown job {job_id!r} (never submitted, already collected, or forgotten)")
        return job

    def AwaitProof(self, request, context):
        job = self._job(request.job_id)
        timeout = request.timeout_s if request.timeout_s > 0 else None
        try:
            answer = job.future.result(timeout=timeout)
        except FutureTimeout:
            raise CallError(grpc.StatusCode.DEADLINE_EXCEEDED,
                            f"{job.id} still {job.state} after {request.timeout_s} s") from None
        except BaseException:
            self.d.scheduler.collected(job)
            raise
        self.d.scheduler.collected(job)
        return self._reply(job, answer)

    def Cancel(self, request, context):
        job = self._job(request.job_id)
        return {"job_id": job.id, "state": self.d.scheduler.cancel(job)}

    def GetStatus(self, request, context):
        return {"json": json.dumps(self.d.status())}

    def _key_reply(self, entry) -> dict:
        return {"key_id": entry.key_id, "tier": self.d.keys.tier_of(entry), "host_bytes": entry.host_bytes,
                "device_bytes": self.d.keys.device_bytes(entry)}

    def PreloadKey(self, request, context):
        entry = self._key(request)
        self.d.n_vars(entry)
        self.d.keys.make_hot(entry)
        self.d.keys.refresh()
        return self._key_reply(entry)

    def EvictKey(self, request, context):
        entry = self._key(request)
        self.d.keys.evict(entry)
        return self._key_reply(entry)

    def GetMetrics(self, request, context):
        return {"text": self.d.metrics.text()}


class TokenCheck(grpc.ServerInterceptor):
    """Every call must carry the token (metadata protocol.TOKEN_METADATA)."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

        def deny(request, context):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "a wrong or missing token: give the daemon's token "
                          f"(metadata {protocol.TOKEN_METADATA}, the client's --token-file)")
        self._deny = grpc.unary_unary_rpc_method_handler(deny)

    def intercept_service(self, continuation, handler_call_details):
        given = dict(handler_call_details.invocation_metadata or ()).get(protocol.TOKEN_METADATA, "")
        if hmac.compare_digest(given.encode() if isinstance(given, str) else given, self._token):
            return continuation(handler_call_details)
        return self._deny


def engine_config(config: ServeConfig, timeline: Path | None) -> EngineConfig:
    """The daemon's Engine settings (bench.serve makes the same Engine in its own process):
    witnesses already in memory (thread synthesis), the device budget for resident keys,
    the timeline live at its name."""
    device_budget = config.device_budget_bytes
    if device_budget is None and not config.cpu:
        free = free_bytes()
        device_budget = None if free is None else int(free * DEVICE_BUDGET_SHARE)
    return EngineConfig(devices=() if config.cpu else None, synthesis="thread", synthesis_workers=1,
                        device_memory_budget_bytes=device_budget, timeline_path=timeline, timeline_live=True)


class Daemon:
    """An Engine, its KeyStore and Scheduler, and the figures GetStatus reports."""

    def __init__(self, config: ServeConfig, address: protocol.Address, timeline: Path) -> None:
        self.config, self.address, self.started = config, address, time.monotonic()
        self.engine = Engine(engine_config(config, timeline))
        host_budget = config.host_budget_bytes or physical_memory_bytes() // 4
        self.keys = KeyStore(self.engine.devices, self.engine.recorder, host_budget, recheck=config.recheck,
                             pinned=any(d.gpu for d in self.engine.devices))
        self.metrics = Metrics(self._busy, self._depth, self._running)
        self.max_running = config.max_running or len(self.engine.devices) * (
            self.engine.config.gpu_workers_per_device + 1)
        self.scheduler = Scheduler(self.engine, self.keys, self.max_running, self._ended)
        self._shapes: dict[str, int] = {}
        self.proofs = self.failures = 0

    def _busy(self) -> float:
        return self.scheduler.busy_fraction()

    def _depth(self) -> int:
        return self.scheduler.depth()

    def _running(self) -> int:
        return self.scheduler.running()

    def n_vars(self, entry) -> int:
        """The key's wire count, from its header (cached per key)."""
        if entry.key_id not in self._shapes:
            try:
                self._shapes[entry.key_id] = read_shape(entry.path).n_vars
            except (OSError, ValueError) as exc:
                self.keys.forget(entry)
                raise ValueError(f"zkey {entry.path}: {exc}") from None
        return self._shapes[entry.key_id]

    def step(self, job: ServedJob, step: str, start_ns: int, end_ns: int) -> None:
        """A ``serve_step`` interval of ``job`` on the timeline (events.py)."""
        self.engine.recorder.interval("serve_step", start_ns, end_ns, job=job.id, step=step)

    def _ended(self, job: ServedJob, state: str) -> None:
        now = time.monotonic_ns()
        self.engine.recorder.interval("served", job.received_ns, now, job=job.id, key=job.key.key_id,
                                      priority=job.priority, outcome={"done": "proved"}.get(state, state))
        if state == "done":
            answer = job.future.result()
            self.step(job, "answer", answer.landed_ns, answer.answered_ns)
            self.proofs += 1
            self.metrics.proofs.labels(job.priority).inc()
            self.metrics.latency.observe((now - job.received_ns) / 1e9)
        else:
            self.failures += 1
            self.metrics.failures.labels(state).inc()

    def status(self) -> dict:
        """GetStatus's JSON (docs/daemon.md)."""
        self.keys.refresh()
        devices = []
        for d in self.engine.devices:
            with d.context():
                used = used_bytes() if d.gpu else None
                free = free_bytes() if d.gpu else None
            devices.append({"id": d.id, "name": d.name, "gpu": d.gpu, "resident_keys": len(d.residents),
                            "resident_key_bytes": sum(r.nbytes for r in d.residents.values()),
                            "memory_used_bytes": used, "memory_free_bytes": free,
                            "key_budget_bytes": d.budget_bytes})
        keys = [{"key_id": e.key_id, "path": e.path, "tier": self.keys.tier_of(e), "host_bytes": e.host_bytes,
                 "device_bytes": self.keys.device_bytes(e), "jobs": e.users, "proofs": e.proofs, "error": e.error}
                for e in self.keys.entries()]
        return {
            "version": __version__, "pid": os.getpid(), "address": str(self.address),
            "uptime_s": round(time.monotonic() - self.started, 3),
            "backend": "gpu" if any(d.gpu for d in self.engine.devices) else "cpu",
            "queue": {"queued": self.scheduler.queued_by_priority(), "running": self.scheduler.running(),
                      "max_running": self.max_running},
            "jobs": self.scheduler.snapshot(), "keys": keys, "devices": devices,
            "host_memory": {"rss_bytes": _rss_bytes(), "total_bytes": physical_memory_bytes(),
                            "warm_key_bytes": sum(k["host_bytes"] for k in keys if k["tier"] != "cold"),
                            "key_budget_bytes": self.keys.host_budget_bytes, "key_memory": self.keys.host_memory},
            "busy_last_minute": round(self.scheduler.busy_fraction(), 4),
            "proofs": self.proofs, "failures": self.failures,
            "timeline": None if self.engine.recorder.live_path is None else str(self.engine.recorder.live_path),
        }

    def close(self) -> list[ServedJob]:
        refused = self.scheduler.drain()
        self.engine.close()
        return refused


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# --- listening -----------------------------------------------------------------------------

def check_listen(address: protocol.Address, token_file: str | None) -> str | None:
    """The token for ``address`` (read from ``token_file``); ValueError for a non-loopback
    TCP address without one."""
    if token_file:
        return protocol.read_token(token_file)
    if not address.loopback:
        raise ValueError(f"refusing to listen on {address}: it is reachable from other machines, and without "
                         "--token-file anyone there could use the prover; give --token-file FILE (a secret of "
                         "16+ characters), or listen on a Unix socket or 127.0.0.1")
    return None


def prepare_socket(path: str) -> None:
    """The socket's folder exists and is private (0700, ours); a stale socket file is removed,
    a live one (another daemon answering) is an error."""
    folder = Path(path).parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = folder.stat()
    if folder == protocol.default_socket().parent and (info.st_uid != os.getuid() or info.st_mode & 0o077):
        raise ValueError(f"{folder}: the socket folder must be ours and private (mode 0700), it is "
                         f"{stat.filemode(info.st_mode)} owned by uid {info.st_uid}")
    if os.path.lexists(path):
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            raise ValueError(f"{path}: exists and is not a socket")
        probe = socket.socket(socket.AF_UNIX)
        try:
            probe.connect(path)
        except OSError:
            os.unlink(path)  # left by a daemon that died
        else:
            raise ValueError(f"{path}: another daemon is listening there")
        finally:
            probe.close()


def default_timeline(address: protocol.Address) -> Path:
    folder = Path(address.path).parent if address.unix else protocol.default_socket().parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder / f"serve-{os.getpid()}.timeline.jsonl"


def start(config: ServeConfig) -> tuple[grpc.Server, Daemon]:
    """Start the daemon (engine, keys preloaded, gRPC listening); not blocking."""
    address = protocol.parse_address(config.listen)
    token = check_listen(address, config.token_file)
    if address.unix:
        prepare_socket(address.path)
    daemon = Daemon(config, address, Path(config.timeline) if config.timeline else default_timeline(address))
    try:
        for path in config.preload:
            entry = daemon.keys.resolve("", os.path.abspath(path))
            daemon.n_vars(entry)
            daemon.keys.make_hot(entry)
        daemon.keys.refresh()
        options = [("grpc.max_send_message_length", protocol.MAX_MESSAGE_BYTES),
                   ("grpc.max_receive_message_length", protocol.MAX_MESSAGE_BYTES),
                   ("grpc.so_reuseport", 0)]
        server = grpc.server(ThreadPoolExecutor(max_workers=config.workers, thread_name_prefix="grpc"),
                             interceptors=[TokenCheck(token)] if token else [], options=options)
        server.add_generic_rpc_handlers((ProverService(daemon).handler(),))
        old = os.umask(0o177)  # the socket is created 0600
        try:
            port = server.add_insecure_port(address.target)
        finally:
            os.umask(old)
        if not address.unix and port == 0:
            raise ValueError(f"cannot listen on {address}: in use or not an address of this machine")
        server.start()
        if address.unix:
            os.chmod(address.path, 0o600)
        if config.metrics_port is not None:
            daemon.metrics.serve_http(config.metrics_port)
    except BaseException:
        daemon.close()
        raise
    return server, daemon


def serve(config: ServeConfig, ready=print) -> int:
    """Run the daemon in the foreground until SIGTERM or SIGINT, then drain: running jobs
    finish, queued ones are answered UNAVAILABLE. ``ready`` gets one line once calls are
    accepted. Returns the number of jobs refused by the drain."""
    server, daemon = start(config)
    stop = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        devices = ", ".join(d.name for d in daemon.engine.devices)
        hot = sum(1 for e in daemon.keys.entries() if daemon.keys.tier_of(e) == "hot")
        ready(f"numba-cuzk serve: ready on {daemon.address} ({devices}; {hot} keys hot; "
              f"timeline {daemon.engine.recorder.live_path})")
        while not stop.wait(0.5):
            pass
    finally:  # a second signal during the drain changes nothing: the handlers stay until it ends
        refused = daemon.close()
        server.stop(DRAIN_GRACE_S).wait()
        if daemon.address.unix and os.path.lexists(daemon.address.path):
            os.unlink(daemon.address.path)
        for s, handler in previous.items():
            signal.signal(s, handler)
    return len(refused)
