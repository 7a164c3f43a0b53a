"""Where a client process's proof through the daemon spends its time (bench/serve.py).

One proof's moments on the host's monotonic clock, in order: the bench's spawn of the
client process, the client's own marks (`numba-cuzk prove --server --json` prints them
as ``t_ns``, time.monotonic_ns), the daemon's events of the proof's job (its timeline's
``t0_ns`` + ``t_ms``: the same clock, one host), and the client's exit as the bench saw
it. Each step is named by the moment that ends it, and lasts from the moment before:

    python_start    spawn -> main: the interpreter, site, numba_cuzk.launch
    client_imports  main -> imported: grpc, the generated modules, the client
    client_prepare  imported -> sent: arguments, paths checked, the witness read, the channel
    request_in      sent -> the daemon's handler entered (``served`` starts): connect,
                    serialize, send, the request parsed by gRPC, a server thread woken
    witness         ``serve_step`` witness: the witness parsed and checked, the key
                    acquired, the job queued
    to_engine       -> the engine's synthesis ran (an array handed over): the daemon's
                    dispatch thread, Engine.submit, the engine's dispatcher and pool
    engine_checks   -> ``queued``: the witness checked again, its field products counted
    stage           -> ``picked_up``: the stager's copy into a pinned slot, its upload
                    issued, a GPU worker woken
    lock            -> ``gpu_bracket`` starts: the device lock, the timer's anchor
    device          ``gpu_bracket``: the graph launched, the device work, the host seeing it end
    to_epilogue     -> ``epilogue`` starts: the window sums handed to the assembly pool
    epilogue        ``epilogue``: Horner per MSM, r and s, the pairing check
    to_answer       -> ``serve_step`` answer starts: done, the job's future, the callbacks
    answer          ``serve_step`` answer: proof.json and public.json texts
    reply           ``serve_step`` reply: the gRPC thread woken, the reply built
    reply_out       -> replied: the reply serialized, sent, parsed by the client
    client_write    replied -> written: the two files written as a pair (fsynced)
    client_exit     written -> the exit seen by the bench: interpreter shutdown, wait

A moment that is missing (an older client or daemon) merges its step into the next
("a+b"), so the steps always add up to the process's wall time.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Iterable

CLIENT_MARKS = ("main", "imported", "sent")  # before the call
CLIENT_AFTER = ("replied", "written")  # after it


def job_events(events: Iterable[dict]) -> dict[str, list[dict]]:
    """A timeline's events by their ``job`` field."""
    by_job: dict[str, list[dict]] = defaultdict(list)
    for event in events:
        if "job" in event:
            by_job[event["job"]].append(event)
    return by_job


def _daemon_moments(events: list[dict], t0_ns: int) -> list[tuple[str, int | None]]:
    """The job's moments in the daemon (monotonic ns; None where the event is missing)."""
    def at(name: str, end: bool = False, step: str | None = None) -> int | None:
        found = [e for e in events if e["event"] == name and (step is None or e.get("step") == step)]
        if not found:
            return None
        return t0_ns + round(found[0]["end_ms" if end else "t_ms"] * 1e6)

    return [("request_in", at("served")), ("witness", at("serve_step", True, "witness")),
            ("to_engine", at("synthesis", True)), ("engine_checks", at("queued")), ("stage", at("picked_up")),
            ("lock", at("gpu_bracket")), ("device", at("gpu_bracket", True)), ("to_epilogue", at("epilogue")),
            ("epilogue", at("epilogue", True)), ("to_answer", at("serve_step", step="answer")),
            ("answer", at("serve_step", True, "answer")), ("reply", at("serve_step", True, "reply"))]


def split_ms(spawn_ns: int, exit_ns: int, marks: dict[str, int], events: list[dict], t0_ns: int) -> dict[str, float]:
    """One client process's proof as ordered steps {name: ms} (module docstring); ``marks``:
    the client's t_ns, ``events``: its job's timeline events, ``t0_ns``: the timeline's."""
    moments = [("python_start", marks.get("main")), ("client_imports", marks.get("imported")),
               ("client_prepare", marks.get("sent")), *_daemon_moments(events, t0_ns),
               ("reply_out", marks.get("replied")), ("client_write", marks.get("written")),
               ("client_exit", exit_ns)]
    steps: dict[str, float] = {}
    last, pending = spawn_ns, []
    for name, at in moments:
        pending.append(name)
        if at is None:
            continue
        steps["+".join(pending)] = round((at - last) / 1e6, 3)
        last, pending = at, []
    return steps


def kernel_ms(events: list[dict]) -> float:
    """The job's kernel phases' device ms (inside ``device``)."""
    return round(sum(e["end_ms"] - e["t_ms"] for e in events if e["event"] == "kernel"), 3)


def median_steps(splits: list[dict[str, float]]) -> dict[str, float]:
    """Each step's median over the runs that have it, in the first run's order."""
    names = list(dict.fromkeys(name for split in splits for name in split))
    return {name: round(statistics.median(s[name] for s in splits if name in s), 3) for name in names}


def sides_ms(steps: dict[str, float]) -> dict[str, float]:
    """The client process's own time (its steps outside the call) and the call's
    (request_in .. reply_out: transport both ways and the daemon)."""
    names = list(steps)
    inside = names[names.index("request_in"):names.index("reply_out") + 1] if {"request_in", "reply_out"} <= set(
        names) else []
    call = sum(steps[n] for n in inside)
    return {"client_process_ms": round(sum(steps.values()) - call, 3), "call_ms": round(call, 3)}
